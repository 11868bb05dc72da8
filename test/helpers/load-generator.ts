/**
 * Keeps `connections` request loops busy against a URL until stopped, and
 * counts every request that did not get a 2xx answer. `retarget` moves the
 * loops to another URL (after a reload onto a new port).
 */
export function loadDuring(url: string, connections: number) {
  let target = url;
  let running = true;
  let sent = 0;
  const failures: string[] = [];
  const loop = async () => {
    while (running) {
      const current = target;
      sent++;
      try {
        const response = await fetch(current);
        await response.arrayBuffer();
        if (!response.ok) failures.push(`${current}: ${response.status}`);
      } catch (error) {
        failures.push(
          `${current}: ${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}`,
        );
      }
    }
  };
  const loops = Array.from({ length: connections }, loop);
  return {
    retarget(next: string) {
      target = next;
    },
    async stop() {
      running = false;
      await Promise.all(loops);
      return { sent, failures };
    },
  };
}
