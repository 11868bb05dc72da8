/**
 * `berth/client`: a small realtime client for a Berth server, over the
 * caller's socket.io-client socket or an in-page server of berth/browser.
 * Runtime-free, with no dependency of its own.
 */
export { createClient } from './create-client.js';
export type {
  Client,
  ClientOptions,
  ClientProblem,
  ClientRecord,
  ClientSocket,
  FetchPath,
  LiveOptions,
  LiveQuery,
  PageChangeEvent,
  PageServer,
  RecordChange,
  RecordFor,
  Resync,
  SubscriptionEvent,
  SubscriptionHandlers,
  SubscriptionListener,
  TokenSource,
  WebSocketClass,
  WebSocketLike,
} from './client-types.js';
export type { PageLiveAnswer, PageLiveHandlers } from '../core/live-queries.js';
