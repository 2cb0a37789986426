/**
 * What the package exports for integrators: the receiver-side signature checks.
 * The service itself runs from the CLI (`alert-webhooks serve`).
 */
export { verifyPayloadHmac, verifyStandardWebhook, type AcceptedSecrets, type StandardWebhookHeaders } from './delivery/verify.js';
export { signPayload, type SigningSecrets } from './delivery/signer.js';
