import { useState } from 'preact/hooks';

/**
 * Copies `text`. The Clipboard API exists only in secure contexts (https, localhost); a console opened over plain
 * http on another host falls back to selecting a hidden textarea and the older copy command.
 */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState<boolean | undefined>(undefined);
  const copy = async () => {
    try {
      if (navigator.clipboard && window.isSecureContext) await navigator.clipboard.writeText(text);
      else {
        const area = document.createElement('textarea');
        area.value = text;
        area.setAttribute('readonly', '');
        area.className = 'offscreen';
        document.body.append(area);
        area.select();
        const ok = document.execCommand('copy');
        area.remove();
        if (!ok) throw new Error('copy refused');
      }
      setCopied(true);
    } catch {
      setCopied(false);
    }
    setTimeout(() => setCopied(undefined), 2000);
  };
  return (
    <span class="copy">
      <button type="button" class="secondary" onClick={() => void copy()}>
        {label}
      </button>
      {/* Shown over the page below the button, not beside it: the message never moves a button. */}
      <span role="status" class="copy-status">
        {copied === true ? 'Copied' : copied === false ? 'Could not copy: select and copy by hand' : ''}
      </span>
    </span>
  );
}
