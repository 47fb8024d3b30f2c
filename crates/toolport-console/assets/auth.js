// Signing in to a protected server: authorization code with PKCE (S256) in
// the browser, against the server's authorization server, as a public
// client; or a pasted access token. The token is kept in this tab's
// sessionStorage only, and sent as `Authorization: Bearer` to the endpoint
// and the admin API, never in a URL.

import { h, fill } from './dom.js';

const TOKEN = 'toolport-console-token';
const PENDING = 'toolport-console-pending';

export function token() {
  return sessionStorage.getItem(TOKEN);
}

function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN, value);
  else sessionStorage.removeItem(TOKEN);
}

function base64url(bytes) {
  let text = '';
  for (const b of new Uint8Array(bytes)) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function random(n = 32) {
  return base64url(crypto.getRandomValues(new Uint8Array(n)));
}

/** The authorization server's metadata: RFC 8414 first, then OpenID discovery. */
async function metadata(issuer) {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  const candidates = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
    `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
  ];
  for (const candidate of candidates) {
    try {
      const response = await fetch(candidate, { headers: { Accept: 'application/json' } });
      if (!response.ok) continue;
      const document = await response.json();
      // A document for another issuer is not used (RFC 8414 §3.3).
      if (document.issuer === issuer) return document;
    } catch {
      // Try the next form.
    }
  }
  throw new Error(`no authorization server metadata for ${issuer}`);
}

/** The settings the page was rendered with. */
export function settings() {
  const d = document.body.dataset;
  return {
    protected: d.protected === 'true',
    issuer: d.oauthIssuer,
    clientId: d.oauthClientId,
    scopes: d.oauthScopes || '',
    resource: d.oauthResource,
  };
}

function redirectUri() {
  return `${location.origin}/ui/callback`;
}

/** Sends the browser to the authorization server. */
export async function signIn() {
  const s = settings();
  const meta = await metadata(s.issuer);
  if (!(meta.code_challenge_methods_supported || []).includes('S256')) {
    throw new Error('the authorization server does not offer PKCE with S256');
  }
  const verifier = random(48);
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const state = random(24);
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, tokenEndpoint: meta.token_endpoint, issuer: s.issuer }));
  const url = new URL(meta.authorization_endpoint);
  const params = {
    response_type: 'code', client_id: s.clientId, redirect_uri: redirectUri(), scope: s.scopes,
    state, code_challenge: challenge, code_challenge_method: 'S256', resource: s.resource,
  };
  for (const [k, v] of Object.entries(params)) if (v) url.searchParams.set(k, v);
  location.assign(url.toString());
}

/** On the way back: checks `state` and `iss`, trades the code for a token. */
export async function completeSignIn() {
  if (location.pathname !== '/ui/callback') return false;
  const query = new URLSearchParams(location.search);
  const pending = JSON.parse(sessionStorage.getItem(PENDING) || 'null');
  sessionStorage.removeItem(PENDING);
  // The code leaves the address bar (and history) whatever happens next.
  history.replaceState(null, '', '/ui');
  if (!pending) throw new Error('no sign-in was started in this tab');
  if (query.get('state') !== pending.state) throw new Error('the sign-in answer does not match the request (state)');
  const iss = query.get('iss');
  if (iss !== null && iss !== pending.issuer) throw new Error(`the answer came from ${iss}, not ${pending.issuer}`);
  if (query.get('error')) throw new Error(`sign-in refused: ${query.get('error_description') || query.get('error')}`);
  const s = settings();
  const body = new URLSearchParams({
    grant_type: 'authorization_code', code: query.get('code') || '', redirect_uri: redirectUri(),
    client_id: s.clientId, code_verifier: pending.verifier,
  });
  if (s.resource) body.set('resource', s.resource);
  const response = await fetch(pending.tokenEndpoint, {
    method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' }, body,
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok || !answer.access_token) {
    throw new Error(`the token request failed: ${answer.error_description || answer.error || response.status}`);
  }
  setToken(answer.access_token);
  return true;
}

/** The sign-in controls in the header. */
export function renderAuth(onChange) {
  const root = document.getElementById('auth');
  const s = settings();
  if (!s.protected) return fill(root);
  if (token()) {
    return fill(root,
      h('span', { class: 'pill ok', id: 'signed-in' }, 'signed in'),
      h('button', { type: 'button', class: 'secondary', id: 'sign-out', onclick: () => { setToken(null); onChange(); } }, 'Sign out'));
  }
  const pasted = h('textarea', { class: 'token', id: 'token-input', placeholder: 'or paste an access token', 'aria-label': 'access token' });
  return fill(root,
    s.issuer && s.clientId
      ? h('button', { type: 'button', class: 'primary', id: 'sign-in', onclick: () => signIn().catch((e) => alertIn(root, e)) }, 'Sign in')
      : null,
    pasted,
    h('button', {
      type: 'button', class: 'secondary', id: 'use-token',
      onclick: () => { if (pasted.value.trim()) { setToken(pasted.value.trim()); onChange(); } },
    }, 'Use token'));
}

function alertIn(root, error) {
  root.append(h('span', { class: 'error', role: 'alert' }, error.message));
}
