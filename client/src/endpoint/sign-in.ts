// The sign-in form of a private instance (ACCESS_MODE=token): asked once, before the page makes or
// joins anything; the token is checked with the server before it is kept. Loaded only on such an
// instance, so the first load of an open one does not carry it.
import { askAccess, keepToken } from '../transport/access.js';
import { h } from '../dom.js';

/** Shows the form until the server accepts a token; resolves with the user it signs in. */
export function signIn(): Promise<string> {
  const input = h('input', {
    attrs: {
      id: 'sign-in-token',
      type: 'password',
      autocomplete: 'current-password',
      spellcheck: 'false',
      required: '',
      maxlength: '1024',
      'aria-describedby': 'sign-in-note sign-in-error',
    },
  });
  const error = h('p', { class: 'field-error', attrs: { id: 'sign-in-error', role: 'alert' } });
  const submit = h('button', { class: 'primary', text: 'Sign in', attrs: { type: 'submit' } });
  const form = h(
    'form',
    { class: 'sign-in-form', attrs: { novalidate: '' } },
    h('label', { text: 'Access token', attrs: { for: 'sign-in-token' } }),
    input,
    error,
    h('div', { class: 'confirm-actions' }, submit),
  );
  const dialog = h(
    'dialog',
    { class: 'endpoints-dialog sign-in', attrs: { id: 'sign-in', 'aria-labelledby': 'sign-in-title' } },
    h('h2', { text: 'Sign in to this Hookwatch', attrs: { id: 'sign-in-title' } }),
    h('p', {
      text: 'This instance is private: creating and watching endpoints needs an access token from its operator. It is kept in this browser. Receiver URLs stay open to every sender.',
      attrs: { id: 'sign-in-note' },
    }),
    form,
  );
  document.body.append(dialog);
  // Nothing on the page works before signing in: Escape does not close the form.
  dialog.addEventListener('cancel', (event) => event.preventDefault());
  return new Promise((resolve) => {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void check();
    });
    async function check(): Promise<void> {
      const value = input.value.trim();
      if (value === '') return refuse('Enter the access token.');
      submit.disabled = true;
      const answer = await askAccess(value);
      submit.disabled = false;
      if (answer === undefined) return refuse('The server did not answer. Try again.');
      if (answer.user === null) return refuse('This server does not accept that token.');
      keepToken(value);
      dialog.close();
      dialog.remove();
      resolve(answer.user);
    }
    function refuse(message: string): void {
      error.textContent = message;
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      input.select();
    }
    dialog.showModal();
    input.focus();
  });
}
