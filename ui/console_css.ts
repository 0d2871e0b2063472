/**
 * The console's stylesheet, served as `/console.css` (the CSP allows no inline style).
 *
 * @module
 */

/** Plain CSS: system font, one table per view, readable at a glance. */
export const CONSOLE_CSS = `
:root { color-scheme: light dark; --line: #8884; --muted: #8a8a8a; --warn: #b35c00; --bad: #b00020; --ok: #1b7f3b; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; }
header { display: flex; gap: 1rem; align-items: center; padding: .6rem 1rem; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header strong { margin-right: 1rem; }
nav a { margin-right: .9rem; text-decoration: none; }
nav a.active { font-weight: 600; text-decoration: underline; }
header form.inline { margin-left: auto; }
main { padding: 1rem; max-width: 110rem; }
h1 { font-size: 1.25rem; margin: .2rem 0 1rem; }
h2 { font-size: 1.05rem; margin: 1.6rem 0 .6rem; }
table { border-collapse: collapse; width: 100%; margin-bottom: 1rem; }
th, td { border-bottom: 1px solid var(--line); padding: .35rem .5rem; text-align: left; vertical-align: top; }
th { font-weight: 600; white-space: nowrap; }
td.url, code { overflow-wrap: anywhere; word-break: break-all; }
td.request { min-width: 24rem; overflow-wrap: anywhere; }
td.request dl { margin: .15rem 0 .5rem; display: grid; grid-template-columns: minmax(5rem, max-content) 1fr; gap: .1rem .6rem; max-height: 28rem; overflow: auto; }
td.request dt { color: var(--muted); }
td.request dd { margin: 0; }
td.request .part { font-size: .85rem; font-weight: 600; margin: .4rem 0 0; }
.shown { white-space: pre-wrap; overflow-wrap: anywhere; }
mark.esc { background: #ffd54f; color: #000; border-radius: 2px; padding: 0 .1em; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85em; }
.flag, .badge { display: inline-block; margin-left: .4rem; padding: 0 .35rem; border: 1px solid var(--warn); border-radius: 3px; color: var(--warn); font-size: .8rem; white-space: nowrap; }
.badge { font-weight: 600; }
tr.flagged > td { background: #ffb3001a; }
details.fold summary { cursor: pointer; }
details.fold .whole { margin-top: .25rem; max-height: 30rem; overflow: auto; border-left: 2px solid var(--line); padding-left: .4rem; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
form.inline { display: inline; margin: 0 .2rem 0 0; }
form.row { display: flex; gap: .5rem; flex-wrap: wrap; align-items: end; margin: 0 0 1rem; }
label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); }
input, select, textarea, button { font: inherit; padding: .3rem .5rem; }
textarea { width: 100%; min-height: 4rem; }
button { cursor: pointer; }
button.approve { border: 1px solid var(--ok); color: var(--ok); font-weight: 600; }
button.deny, button.danger { border: 1px solid var(--bad); color: var(--bad); }
.muted { color: var(--muted); }
.empty { color: var(--muted); font-style: italic; }
.notice { padding: .5rem .8rem; border: 1px solid var(--warn); margin: 0 0 1rem; }
.error { padding: .5rem .8rem; border: 1px solid var(--bad); color: var(--bad); margin: 0 0 1rem; }
.key { font-size: 1.1rem; padding: .6rem; border: 2px dashed var(--warn); display: inline-block; }
.state-approved, .state-answered, .ok { color: var(--ok); }
.state-denied, .state-expired, .bad { color: var(--bad); }
.state-withdrawn { color: var(--muted); }
.login { max-width: 26rem; margin: 4rem auto; }
.login input { width: 100%; margin: .4rem 0 .8rem; }
`;
