import { CopyButton } from '../components/copy-button';
import { Link } from '../components/link';
import { PageTitle } from '../components/page';
// The repository's example receiver itself, bundled at build time: the page always shows the file as it is, and the
// console (often on machines with no way out) links nothing outside the service.
import source from '../../../examples/receiver.ts?raw';

/** examples/receiver.ts, to copy: a receiver that checks signatures and drops repeats, and how to run it. */
export function ReceiverExamplePage() {
  return (
    <>
      <p class="crumbs">
        <Link href="/webhooks">Webhooks</Link> / example receiver
      </p>
      <PageTitle title="Example receiver">Example receiver</PageTitle>
      <section class="card" aria-labelledby="run-it">
        <h2 id="run-it">Run it</h2>
        <p>
          A receiver in one file of Node (<code>examples/receiver.ts</code> in the repository): it checks each delivery's <code>X-Payload-HMAC</code> with the secret
          you give it (401 when wrong), answers 204, drops repeats by <code>webhook-id</code> and prints each event. From a checkout of the repository:
        </p>
        <pre class="payload">WEBHOOK_SECRET=&lt;the webhook's secret&gt; PORT=4000 npx tsx examples/receiver.ts</pre>
        <p>
          Then <Link href="/webhooks">create a webhook</Link> to <code>http://&lt;its host&gt;:4000/</code> with the same secret, and send it a ping from the webhook's
          page. In your own project, import <code>verifyPayloadHmac</code> from <code>alert-webhooks</code> (<code>alert-webhooks/verify</code> loads only the receiver
          side).
        </p>
      </section>
      <section class="card" aria-labelledby="source">
        <div class="section-head">
          <h2 id="source">examples/receiver.ts</h2>
          <CopyButton text={source} label="Copy the receiver" />
        </div>
        <pre class="payload source" aria-labelledby="source" tabIndex={0}>
          {source}
        </pre>
      </section>
    </>
  );
}
