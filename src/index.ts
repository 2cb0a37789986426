/**
 * What the package exports for integrators: the receiver-side signature checks.
 * The service itself runs from the CLI (`alert-webhooks serve`).
 */
export { verifyPayloadHmac, verifyStandardWebhook } from './delivery/verify.js';
export { signPayload } from './delivery/signer.js';
