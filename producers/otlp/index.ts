export {
  createOtlpReceiver,
  OTLP_PRODUCER,
  type OtlpExportResult,
  type OtlpReceiver,
  type OtlpReceiverOptions,
} from './receiver.ts';
export {
  decodeJson,
  decodeProtobuf,
  decodeResponse,
  decodeStatus,
  encodeResponse,
  encodeStatus,
  encodeTraceRequest,
  MalformedOtlp,
} from './decode.ts';
export { createSpanAssembler, traceOf } from './genai.ts';
