/** How realtime behaves on Node; the node runtime reads each from its settings. */
export interface RealtimeSettings {
  maxMessageBytes: number;
  origins: readonly string[];
  pingInterval: number;
  pingTimeout: number;
  /** Connections one process holds, and one address. */
  maxConnections: number;
  maxConnectionsPerIp: number;
  /** Messages per second one client may send. */
  messageRate: number;
  /** Bytes that may wait to be sent to one client. */
  sendBuffer: number;
}

export const defaultRealtimeSettings: RealtimeSettings = {
  maxMessageBytes: 1024 * 1024,
  origins: [],
  pingInterval: 25_000,
  pingTimeout: 20_000,
  maxConnections: 10_000,
  maxConnectionsPerIp: 256,
  messageRate: 100,
  sendBuffer: 8 * 1024 * 1024,
};

/**
 * The settings that raise the connection limits, by their environment
 * variable and their key in berth.config.json: the setting table declares
 * them with these names, and a refused client is told them.
 */
export const connectionLimitSettings = {
  maxConnections: { variable: 'BERTH_REALTIME_MAX_CONNECTIONS', key: 'realtimeMaxConnections' },
  maxConnectionsPerIp: {
    variable: 'BERTH_REALTIME_MAX_CONNECTIONS_PER_IP',
    key: 'realtimeMaxConnectionsPerIp',
  },
} as const;
