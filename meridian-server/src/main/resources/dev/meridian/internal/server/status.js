// Meridian's status page (issue 24): reads status and clients (relative URLs, so that the page
// also works where an application mounts the admin handler, e.g. /meridian/) every 2 s.
// Node ids, peers and NACK messages come from clients: they are only ever set as text, never as
// markup.
"use strict";

const REFRESH_MS = 2000;

function $(id) { return document.getElementById(id); }

/** An element with a class and children (strings become text nodes). */
function el(tag, cls, ...children) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function time(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toLocaleString();
}

function ago(iso) {
  const s = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (!isFinite(s)) return "";
  if (s < 60) return Math.max(s, 0) + " s ago";
  if (s < 3600) return Math.round(s / 60) + " min ago";
  if (s < 86400) return Math.round(s / 3600) + " h ago";
  return Math.round(s / 86400) + " d ago";
}

async function getJson(path) {
  const r = await fetch(path, { cache: "no-store", headers: { Accept: "application/json" } });
  if (!r.ok) throw new Error(path + ": HTTP " + r.status);
  return r.json();
}

function typeBadge(t) {
  const v = t.last_acked_version;
  if (t.in_sync) {
    return el("span", "pill ok", t.type + " ✓ " + (v === null ? "" : v));
  }
  const nacked = t.last_nack && t.last_nack.version === t.last_sent_version;
  if (nacked) return el("span", "pill bad", t.type + " NACKed " + (t.last_nack.version || ""));
  return el("span", "pill warn", t.type + " waiting" + (v === null ? "" : " (has " + v + ")"));
}

function clientRow(c) {
  const node = el("td", null, el("div", "mono", c.node_id === null ? "(no node yet)" : c.node_id),
    el("div", "sub", [c.node_cluster, c.variant + (c.ads ? " ADS" : ""), "since " + time(c.connected_since)]
      .filter(Boolean).join(" · ")));
  const types = el("td");
  for (const t of c.types) types.append(typeBadge(t));
  for (const t of c.types) {
    if (!t.last_nack) continue;
    const n = t.last_nack;
    types.append(el("div", "nack",
      el("strong", null, t.type + " rejected version " + n.version),
      el("span", "sub", " · " + time(n.at) + (n.kept_version ? " · keeps " + n.kept_version : "")
        + (t.in_sync ? " · since resolved" : "")),
      el("div", "msg mono", n.message)));
  }
  const row = el("tr", null, node, el("td", "mono", c.group), el("td", "mono", c.identity || "–"),
    el("td", "mono", c.peer), types);
  row.dataset.node = c.node_id || "";
  return row;
}

function renderClients(body) {
  const rows = body.clients.map(clientRow);
  $("clients").replaceChildren(...rows);
  $("client-count").textContent = body.count === 1 ? "1 stream" : body.count + " streams";
  $("no-clients").hidden = body.count > 0;
}

/** Each result's badge colour and what it means. */
const RESULTS = {
  ok: ["ok", r => "served, " + r.changed + (r.changed === 1 ? " resource" : " resources") + " changed"],
  recovered: ["ok", () => "back to the config in force: nothing to apply"],
  held: ["warn", () => "held: it would empty what is served"],
  failed: ["bad", () => "rejected"],
};

function renderReload(r) {
  if (!r) return "none";
  const [cls, what] = RESULTS[r.result] || ["warn", () => r.result];
  return el("span", null, el("span", "pill " + cls, r.result),
    what(r) + " · " + time(r.at) + " (" + ago(r.at) + ")");
}

/** Whether the config source's content is what is served (config_state). */
const STATES = {
  ok: ["ok", "its source's content is served"],
  held: ["warn", "its source's content would empty what is served: the last good config is served"],
  failed: ["bad", "its source's content was rejected: the last good config is served"],
};

function renderState(state) {
  if (!state) return "not loaded yet";
  const [cls, text] = STATES[state] || ["warn", ""];
  return el("span", null, el("span", "pill " + cls, state), text);
}

/** A past held or rejected reload, its lines below it; marked resolved once it is not the state. */
function renderPast(id, linesId, r, lines, current) {
  const dd = $(id);
  dd.replaceChildren(renderReload(r));
  if (r && !current) dd.append(el("span", "sub", " · resolved"));
  const pre = $(linesId);
  pre.textContent = r ? lines.join("\n") : "";
  pre.hidden = !r || lines.length === 0;
  pre.classList.toggle("resolved", !current);
}

function renderStatus(s) {
  $("control-plane").textContent = s.control_plane || "(no control plane id)";
  document.title = "Meridian " + (s.control_plane || "");
  const ready = $("readiness");
  ready.textContent = s.ready ? "ready" : "not ready";
  ready.className = "pill " + (s.ready ? "ok" : "bad");

  const types = [];
  for (const g of s.groups) for (const t of Object.keys(g.resources)) if (!types.includes(t)) types.push(t);
  $("groups-head").replaceChildren(el("tr", null, el("th", null, "Group"),
    ...types.map(t => el("th", null, t)), el("th", null, "Total")));
  $("groups").replaceChildren(...s.groups.map(g => el("tr", null, el("td", "mono", g.name),
    ...types.map(t => el("td", null, g.resources[t] || 0)), el("td", null, el("strong", null, g.total)))));

  $("config-state").replaceChildren(renderState(s.config_state));
  $("last-reload").replaceChildren(renderReload(s.last_reload));
  const warnings = s.warnings || [];
  $("warning-count").textContent = warnings.length === 0 ? "none"
    : warnings.length + (warnings.length === 1 ? " warning" : " warnings") + " in the config served";
  const notes = $("config-warnings");
  notes.textContent = warnings.join("\n");
  notes.hidden = warnings.length === 0;
  const held = s.last_held_reload;
  renderPast("last-held", "last-held-removes", held, held ? held.removes : [],
    s.config_state === "held");
  const failed = s.last_failed_reload;
  renderPast("last-failed", "last-failed-errors", failed, failed ? failed.errors : [],
    s.config_state === "failed");

  const publish = s.publish;
  $("publish-card").hidden = !publish;
  if (publish) {
    $("publish-dir").textContent = publish.dir;
    $("publish-last").replaceChildren(el("span", null,
      el("span", "pill " + (publish.result === "ok" ? "ok" : "bad"), publish.result),
      (publish.result === "ok" ? "every file current" : "files not current")
        + " · " + time(publish.at) + " (" + ago(publish.at) + ")"));
    const pe = $("publish-errors");
    pe.textContent = publish.errors.join("\n");
    pe.hidden = publish.errors.length === 0;
  }

  const store = s.config_source;
  $("store-card").hidden = !store;
  if (store) {
    const rows = [["Source", store.source], ["Connected", store.connected ? "yes" : "no, since " + time(store.since)],
      ["Loaded", store.loaded ? "yes" : "not yet"], ["Revision", store.revision], ["Detail", store.detail || "–"]];
    $("store").replaceChildren(...rows.flatMap(([k, v]) => [el("dt", null, k), el("dd", "mono", v)]));
  }
}

async function refresh() {
  try {
    const [status, clients] = await Promise.all([getJson("status"), getJson("clients")]);
    renderStatus(status);
    renderClients(clients);
    $("banner").className = "";
    $("updated").textContent = "updated " + new Date().toLocaleTimeString();
  } catch (e) {
    const banner = $("banner");
    banner.textContent = "Cannot reach the admin port (" + e.message + "); showing the last data.";
    banner.className = "shown";
  } finally {
    setTimeout(refresh, REFRESH_MS);
  }
}

refresh();
