/*
 * app-server-client: spawn the daemon (or connect to one listening on ws:// or unix://), speak its JSON-RPC protocol with types generated from
 * the protocol tables (protocol.ts), run commands (exec) and drive threads and turns.
 */
export * from "./protocol.js";
export {
  Connection,
  spawn,
  connect,
  defaultServerAnswer,
  type SpawnOptions,
  type ConnectOptions,
  type RequestOptions,
  type ExitStatus,
  type ParamsOf,
  type ResultOf,
  type NotificationOf,
  type ServerParamsOf,
  type ServerResultOf,
  type ServerRequestHandler,
  type ServerRequestContext,
} from "./connection.js";
export { ExecProcess, exec, type ExecChunk } from "./exec.js";
export { Thread, Turn, startThread, resumeThread, type TurnEvent, type ThreadInfo, type TurnInfo, type UserInput } from "./thread.js";
export { RpcError, ConnectionClosedError, RequestTimeoutError, ErrorCode } from "./errors.js";
export { backoffDelay, type RetryOptions } from "./retry.js";
export { LineSplitter, LineTooLongError, DEFAULT_MAX_LINE_BYTES } from "./lines.js";
export { AsyncQueue } from "./queue.js";
export { WebSocketClient, WebSocketError, FrameReader, type WebSocketOptions } from "./ws.js";
