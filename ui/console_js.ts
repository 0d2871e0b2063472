/**
 * The console's one script, served as `/console.js` (the CSP allows no inline script). It
 * listens to `/api/events`; on a change it refreshes the page's live table from the server
 * (already escaped there; unfolded values stay unfolded and scrolled lists stay scrolled),
 * puts the number of pending requests in the title, and beeps when a new one arrives. Without it every page still works, by reloading.
 *
 * @module
 */

/** Plain browser JavaScript, no build step. */
export const CONSOLE_JS = `"use strict";
(() => {
  const baseTitle = document.title;
  let audio = null;
  // Browsers start audio only after a gesture: the first click or key unlocks the beep.
  const unlock = () => {
    try {
      if (!audio) audio = new AudioContext();
      if (audio.state === "suspended") audio.resume();
    } catch (_) { /* no audio: the title still changes */ }
  };
  addEventListener("pointerdown", unlock);
  addEventListener("keydown", unlock);

  function beep() {
    if (!audio || audio.state !== "running") return;
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.type = "sine";
    osc.frequency.value = 880;
    gain.gain.setValueAtTime(0.15, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.25);
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.25);
  }

  async function count(url) {
    const res = await fetch(url, { credentials: "same-origin" });
    if (!res.ok) return 0;
    const list = await res.json();
    return Array.isArray(list) ? list.length : 0;
  }

  async function refresh() {
    try {
      const live = document.querySelector("[data-live]");
      if (live) {
        const res = await fetch(live.dataset.live, { credentials: "same-origin" });
        // A session that ended answers with the login page: go there instead of showing it.
        if (res.status === 401 || res.redirected) { location.assign("/login"); return; }
        if (res.ok) {
          const text = await res.text();
          // Keep what the operator unfolded and how far a long list was scrolled.
          const open = new Set(Array.from(live.querySelectorAll("details[open][data-fold]"), (d) => d.dataset.fold));
          const scrolled = new Map(Array.from(live.querySelectorAll("[data-scroll]"), (e) => [e.dataset.scroll, e.scrollTop]));
          live.innerHTML = text;
          for (const d of live.querySelectorAll("details[data-fold]")) if (open.has(d.dataset.fold)) d.open = true;
          for (const e of live.querySelectorAll("[data-scroll]")) {
            const top = scrolled.get(e.dataset.scroll);
            if (top) e.scrollTop = top;
          }
        }
      }
      const n = await count("/api/approvals?state=pending") + await count("/api/questions?state=pending");
      document.title = n > 0 ? "(" + n + ") " + baseTitle : baseTitle;
    } catch (_) { /* the next event tries again */ }
  }

  const events = new EventSource("/api/events");
  const onChange = (e) => {
    let change = null;
    try { change = JSON.parse(e.data); } catch (_) { /* ignore */ }
    if (change && change.type === "added") beep();
    refresh();
  };
  events.addEventListener("approval", onChange);
  events.addEventListener("question", onChange);
  // After a (re)connect, catch up with whatever changed while the stream was down.
  events.addEventListener("ready", refresh);
})();
`;
