/** A change to a record, as published to realtime subscribers. */
export interface ChangeEvent {
  /** The collection or topic, for example `books`. */
  topic: string;
  action: 'created' | 'updated' | 'deleted';
  record: { id: string } & object;
  /** Its place in the app's change log (where the storage keeps one): rising, one order for every subscriber. */
  seq?: number;
}

type Listener = (event: ChangeEvent) => void;

/** A small in-process publish/subscribe hub for change events. */
export class EventBus {
  readonly #listeners = new Set<Listener>();

  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  publish(event: ChangeEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A failing subscriber must never break the write that published.
      }
    }
  }
}
