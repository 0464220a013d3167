// The API key of this browser tab, for every kanawa page (GET /page/key.js; the pages load it before
// their own script). The key comes from the URL fragment (#key=..., never sent to the server in a
// URL, and taken out of the address bar at once), else from the tab's sessionStorage, else the page
// asks for it. A #key= never silently replaces the key the tab holds: a link could otherwise sign the
// person into another tenant, whose operators then read what they send. The page asks first, naming
// both tenants, and `settle()` resolves only once the person has chosen (nothing is sent with either
// key before). Every page shows the tenant of the key in use (#tenant-name inside #tenant).
"use strict";
(function () {
  const STORE = "kanawa-key";
  const fromLink = new URLSearchParams(location.hash.slice(1)).get("key");
  let held = sessionStorage.getItem(STORE) || "";
  let offered = "";
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

  /** Resolves when the page may go on with `get()`: at once, or once the person kept the key the tab
   * holds (switching reloads the page with the new key). */
  function settle() {
    if (!offered) return Promise.resolve();
    return new Promise((resolve) => {
      const box = switchBox();
      Promise.all([tenantOf(held), tenantOf(offered)]).then(([current, other]) => {
        document.getElementById("switch-text").textContent =
          "This link carries another API key" +
          (other ? ` (tenant \u201c${other}\u201d)` : " (not accepted by this server)") +
          `. Keep using tenant \u201c${current || "unknown"}\u201d, or switch? ` +
          "Runs you start after switching belong to the new key's tenant, whose operators can read them.";
        box.hidden = false;
        document.getElementById("switch-keep").focus();
      });
      document.getElementById("switch-keep").addEventListener("click", () => {
        offered = "";
        box.hidden = true;
        resolve();
      });
      document.getElementById("switch-yes").addEventListener("click", () => {
        sessionStorage.setItem(STORE, offered);
        location.reload();
      });
    });
  }

  /** Show the tenant of the key in use in #tenant-name (and #tenant), when the page has them. */
  async function showTenant() {
    const name = document.getElementById("tenant-name");
    const tenant = await tenantOf(held);
    if (name) name.textContent = tenant || "";
    const shown = document.getElementById("tenant");
    if (shown) shown.hidden = !tenant;
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
    showTenant,
    tenantOf,
  });
})();
