/**
 * `berth/client`: a small realtime client for a Berth server, over the
 * caller's socket.io-client socket. Runtime-free, with no dependency of its
 * own.
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
  RecordChange,
  RecordFor,
  Resync,
  SubscriptionEvent,
  SubscriptionHandlers,
  SubscriptionListener,
} from './client-types.js';
