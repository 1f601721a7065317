// Switchboard operator console: live refresh over Server-Sent Events and
// the action buttons (every POST carries the page's CSRF token).
(() => {
  "use strict";
  // The sign-in page: the link's token travels in its fragment, which no
  // server sees; put it in the form and take it out of the address bar.
  const signinToken = document.getElementById("signin-token");
  if (signinToken && location.hash.length > 1) {
    signinToken.value = decodeURIComponent(location.hash.slice(1));
    history.replaceState(null, "", location.pathname);
  }
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";
  const toastBox = document.getElementById("toast");
  let toastTimer;
  function toast(text) {
    if (!toastBox) return;
    toastBox.textContent = text;
    toastBox.classList.add("shown");
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => toastBox.classList.remove("shown"), 5000);
  }

  const live = document.getElementById("live");
  let queued = false;
  let running = false;
  async function refresh() {
    if (!live) return;
    if (running) { queued = true; return; }
    running = true;
    try {
      const r = await fetch(live.dataset.fragment, { credentials: "same-origin" });
      if (r.ok) {
        live.innerHTML = await r.text();
        document.body.dataset.refreshed = String(Date.now());
      }
    } finally {
      running = false;
      if (queued) { queued = false; schedule(); }
    }
  }
  let timer = null;
  function schedule() {
    if (timer) return;
    timer = setTimeout(() => { timer = null; refresh(); }, 60);
  }

  document.addEventListener("click", async (ev) => {
    const b = ev.target.closest("button[data-post]");
    if (!b) return;
    // Destructive buttons need a second click.
    if (b.classList.contains("danger") && !b.classList.contains("armed")) {
      b.classList.add("armed");
      b.dataset.label = b.textContent;
      b.textContent = "Click again to confirm";
      setTimeout(() => { b.classList.remove("armed"); if (b.dataset.label) b.textContent = b.dataset.label; }, 4000);
      return;
    }
    b.disabled = true;
    try {
      const r = await fetch(b.dataset.post, {
        method: "POST",
        credentials: "same-origin",
        headers: { "X-CSRF-Token": csrf, "Content-Type": "text/plain" },
        body: b.dataset.body || "",
      });
      const text = await r.text();
      toast(text);
      document.body.dataset.lastAction = r.status + " " + text;
      if (b.dataset.post === "/console/spawning") { location.reload(); return; }
      if (b.dataset.post === "/console/signout") { location.href = "/console"; return; }
      schedule();
    } catch (e) {
      toast("The gateway did not answer: " + e);
    } finally {
      b.disabled = false;
    }
  });

  if (live) {
    const events = new EventSource("/console/events");
    events.addEventListener("runs", schedule);
    events.addEventListener("approvals", schedule);
    events.addEventListener("open", () => { document.body.dataset.live = "1"; });
    // Elapsed times move on, and other gateways of a cluster do not
    // send events here: re-read now and then as well.
    setInterval(schedule, 10000);
  }
})();
