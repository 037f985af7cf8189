/** Version written into every event's `producer` field. */
export const PRODUCER_VERSION = '0.1.0';
