// The console's passkey forms (a form with `data-passkey`): ask the console for the
// ceremony's options, let the browser make or use the passkey, and submit the form with its
// answer. Without this script the forms stay hidden and the password form is unchanged.
"use strict";

(function () {
  function bytes(text) {
    const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
    const padded = base64 + "===".slice((base64.length + 3) % 4);
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  }

  function text(buffer) {
    let binary = "";
    new Uint8Array(buffer).forEach((b) => { binary += String.fromCharCode(b); });
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function described(list) {
    return (list || []).map((c) => Object.assign({}, c, { id: bytes(c.id) }));
  }

  function answer(credential) {
    const r = credential.response;
    const response = { clientDataJSON: text(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = text(r.attestationObject);
      response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      response.authenticatorData = text(r.authenticatorData);
      response.signature = text(r.signature);
      if (r.userHandle) { response.userHandle = text(r.userHandle); }
    }
    return JSON.stringify({
      id: credential.id,
      rawId: text(credential.rawId),
      type: credential.type,
      response: response,
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
    });
  }

  async function ceremony(form) {
    const body = new URLSearchParams({ csrf: form.elements.csrf.value });
    const given = await fetch(form.dataset.options, {
      method: "POST", body: body, credentials: "same-origin",
    });
    if (!given.ok) { throw new Error("options refused"); }
    const options = await given.json();
    let credential;
    if (form.dataset.passkey === "register") {
      options.challenge = bytes(options.challenge);
      options.user = Object.assign({}, options.user, { id: bytes(options.user.id) });
      options.excludeCredentials = described(options.excludeCredentials);
      credential = await navigator.credentials.create({ publicKey: options });
    } else {
      options.challenge = bytes(options.challenge);
      options.allowCredentials = described(options.allowCredentials);
      credential = await navigator.credentials.get({ publicKey: options });
    }
    form.elements.credential.value = answer(credential);
    form.submit();
  }

  document.querySelectorAll("form[data-passkey]").forEach((form) => {
    const status = form.querySelector("[role=status]");
    form.hidden = false;
    if (!window.PublicKeyCredential || !navigator.credentials) {
      form.querySelector("button").disabled = true;
      status.textContent = form.dataset.unsupported;
      return;
    }
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      status.textContent = form.dataset.working;
      ceremony(form).catch(() => { status.textContent = form.dataset.failed; });
    });
  });
})();
