// The API key of this browser tab, for every kanawa page (GET /page/key.js; the pages load it before
// their own script). The key comes from the URL fragment (#key=..., never sent to the server in a
// URL, and taken out of the address bar at once), else from the tab's sessionStorage, else the page
// asks for it. A #key= never silently replaces the key the tab holds: a link could otherwise sign the
// person into another tenant, whose operators then read what they send. The page asks first, naming
// both tenants, and `settle()` resolves only once the person has chosen (nothing is sent with either
// key before). Every page shows the tenant of the key in use (#tenant-name inside #tenant). A page in
// another language words the question itself: `settle(describe)` with `describe(current, other)`
// giving the text, and `asking()` (the two tenants while the page asks) to word it again.
"use strict";
(function () {
  const STORE = "kanawa-key";
  const fromLink = new URLSearchParams(location.hash.slice(1)).get("key");
  let held = sessionStorage.getItem(STORE) || "";
  let offered = "";
  let asked = null; // [the held key's tenant, the offered key's tenant] while the page asks
  if (fromLink !== null) {
    history.replaceState(null, "", location.pathname + location.search);
    if (fromLink && (!held || held === fromLink)) {
      held = fromLink;
      sessionStorage.setItem(STORE, fromLink);
    } else if (fromLink) {
      offered = fromLink;
    }
  }

  /** The tenant of `key` (GET /v1/whoami), or null when the server does not accept it. */
  async function tenantOf(key) {
    if (!key) return null;
    try {
      const response = await fetch("/v1/whoami", { headers: { Authorization: "Bearer " + key } });
      return response.ok ? (await response.json()).tenant : null;
    } catch (e) {
      return null;
    }
  }

  /** The box that asks (the page's own #switchbox, or one made at the top of <main>). */
  function switchBox() {
    let box = document.getElementById("switchbox");
    if (box) return box;
    box = document.createElement("section");
    box.id = "switchbox";
    box.setAttribute("role", "alertdialog");
    box.setAttribute("aria-labelledby", "switch-text");
    box.hidden = true;
    const text = document.createElement("p");
    text.id = "switch-text";
    const keep = document.createElement("button");
    keep.id = "switch-keep";
    keep.type = "button";
    keep.textContent = "keep the current key";
    const take = document.createElement("button");
    take.id = "switch-yes";
    take.type = "button";
    take.textContent = "switch to the new key";
    box.append(text, keep, take);
    (document.querySelector("main") || document.body).prepend(box);
    return box;
  }

  /** The question, in English: `current` and `other` are the tenants of the two keys (null: unknown). */
  function question(current, other) {
    return (
      "This link carries another API key" +
      (other ? ` (tenant \u201c${other}\u201d)` : " (not accepted by this server)") +
      `. Keep using tenant \u201c${current || "unknown"}\u201d, or switch? ` +
      "Runs you start after switching belong to the new key's tenant, whose operators can read them."
    );
  }

  /** Resolves when the page may go on with `get()`: at once, or once the person kept the key the tab
   * holds (switching reloads the page with the new key). `describe(current, other)` words the
   * question (default: English). */
  function settle(describe) {
    if (!offered) return Promise.resolve();
    return new Promise((resolve) => {
      const box = switchBox();
      Promise.all([tenantOf(held), tenantOf(offered)]).then(([current, other]) => {
        if (!offered) return; // answered already
        asked = [current, other];
        shown(current); // the tenant in use stays shown while the page asks
        document.getElementById("switch-text").textContent = (describe || question)(current, other);
        box.hidden = false;
        document.getElementById("switch-keep").focus();
      });
      document.getElementById("switch-keep").addEventListener("click", () => {
        offered = "";
        asked = null;
        box.hidden = true;
        resolve();
      });
      document.getElementById("switch-yes").addEventListener("click", () => {
        sessionStorage.setItem(STORE, offered);
        location.reload();
      });
    });
  }

  /** `tenant` in #tenant-name (and #tenant shown), when the page has them. */
  function shown(tenant) {
    const name = document.getElementById("tenant-name");
    if (name) name.textContent = tenant || "";
    const box = document.getElementById("tenant");
    if (box) box.hidden = !tenant;
  }

  /** Show the tenant of the key in use in #tenant-name (and #tenant), when the page has them. */
  async function showTenant() {
    shown(await tenantOf(held));
  }

  window.kanawaKey = Object.freeze({
    /** The key in use ("" when there is none). */
    get: () => held,
    /** Use `key` (typed in by the person) from now on, in this tab. */
    set: (key) => {
      held = key;
      sessionStorage.setItem(STORE, key);
    },
    settle,
    /** The two tenants ([held, offered]) while the page asks, else null. */
    asking: () => asked,
    showTenant,
    tenantOf,
  });
})();
