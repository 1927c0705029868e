// figlink search page.
// - Paper text only ever goes through textContent / createTextNode, never innerHTML, so markup in a
//   caption, title or citing sentence is shown, not run. URLs are built from ids with encodeURIComponent.
// - The URL holds the whole state: /?q=…&level=panel&type=a,b&medical=1&open=1&year_min=…&year_max=… for a
//   search, plus &paper=…&figure=…[&panel=…] for one figure. Reload, back/forward and pasted links work.
"use strict";

const PAGE = 24; // hits per request
const THUMB = 480; // longest side of grid thumbnails (the server downscales)
const PANEL_COLORS = ["#e8590c", "#1c7ed6", "#2f9e44", "#ae3ec9", "#e67700", "#0c8599", "#d6336c", "#5c7cfa",
  "#66a80f", "#c2255c"];

const $ = (sel, root) => (root || document).querySelector(sel);
const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
const enc = encodeURIComponent;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k === "vars") for (const [name, val] of Object.entries(v)) node.style.setProperty(name, val);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return node;
}

const plural = (n, one, many) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
const figLabel = (label, id) => (label || id || "Figure").replace(/[\s.:]+$/, "");
const typeName = (t) => (t || "").replace(/_/g, " ");
const isHttp = (u) => typeof u === "string" && /^https?:\/\//i.test(u);

// ---- state in the URL ------------------------------------------------------------------------------------

function readState() {
  const p = new URLSearchParams(location.search);
  const get = (k) => (p.get(k) || "").trim();
  const year = (k) => (/^\d{1,4}$/.test(get(k)) ? get(k) : "");
  return {
    q: get("q"), level: get("level") === "panel" ? "panel" : "figure",
    type: get("type") ? get("type").split(",").map((t) => t.trim()).filter(Boolean) : [],
    medical: ["1", "0"].includes(get("medical")) ? get("medical") : "", open: get("open") === "1",
    year_min: year("year_min"), year_max: year("year_max"),
    paper: p.has("paper") && p.has("figure") ? p.get("paper") : null,
    figure: p.has("paper") && p.has("figure") ? p.get("figure") : null, panel: get("panel") || null,
  };
}

function pageURL(s) {
  const p = new URLSearchParams();
  if (s.q) p.set("q", s.q);
  if (s.level === "panel") p.set("level", "panel");
  if (s.type.length) p.set("type", s.type.join(","));
  if (s.medical) p.set("medical", s.medical);
  if (s.open) p.set("open", "1");
  if (s.year_min) p.set("year_min", s.year_min);
  if (s.year_max) p.set("year_max", s.year_max);
  if (s.paper !== null && s.figure !== null) {
    p.set("paper", s.paper);
    p.set("figure", s.figure);
    if (s.panel) p.set("panel", s.panel);
  }
  const qs = p.toString();
  return qs ? "/?" + qs : "/";
}

const searchOnly = (s) => ({ ...s, paper: null, figure: null, panel: null });
const filterCount = (s) => s.type.length + (s.medical ? 1 : 0) + (s.open ? 1 : 0) + (s.year_min ? 1 : 0) + (s.year_max ? 1 : 0);

let fromResults = false; // the detail view was opened from the results (so "back" is history.back())

function navigate(s, { replace = false } = {}) {
  const url = pageURL(s);
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  render();
}

// ---- the form and filters mirror the state -------------------------------------------------------------

function formState() {
  const s = readState();
  return {
    ...searchOnly(s), q: $("#q").value.trim(), level: $("input[name=level]:checked").value,
    type: $$("#types input:checked").map((i) => i.value), medical: $("input[name=medical]:checked").value,
    open: $("#open").checked, year_min: yearValue("#year_min"), year_max: yearValue("#year_max"),
  };
}

function yearValue(sel) {
  const v = $(sel).value.trim();
  return /^\d{1,4}$/.test(v) && +v > 0 ? String(+v) : "";
}

function syncForm(s) {
  if (document.activeElement !== $("#q") || !$("#q").value) $("#q").value = s.q;
  $(`input[name=level][value=${s.level}]`).checked = true;
  ensureTypeOptions(s.type);
  for (const i of $$("#types input")) i.checked = s.type.includes(i.value);
  $(`input[name=medical][value="${s.medical}"]`).checked = true;
  $("#open").checked = s.open;
  $("#year_min").value = s.year_min;
  $("#year_max").value = s.year_max;
  const n = filterCount(s);
  $("#clear").hidden = !n;
  $("#filter-count").hidden = !n;
  $("#filter-count").textContent = n ? String(n) : "";
}

function typeOption(label, count) {
  return el("label", { class: "opt" }, el("input", { type: "checkbox", value: label }), typeName(label),
    count === null ? null : el("span", { class: "n" }, count.toLocaleString("en")));
}

// a type named in the URL but absent from the facets still gets a box, so it can be unticked
function ensureTypeOptions(types) {
  const box = $("#types");
  const have = new Set($$("input", box).map((i) => i.value));
  for (const t of types) {
    if (have.has(t)) continue;
    if (!have.size) box.replaceChildren();
    box.appendChild(typeOption(t, null));
    have.add(t);
  }
}

async function loadFacets() {
  let f;
  try {
    f = await getJSON("/api/facets");
  } catch (e) {
    return; // no index yet: the search says why
  }
  const box = $("#types");
  const chosen = readState().type;
  box.replaceChildren(...f.figure_type.map((t) => typeOption(t.label, t.figures)));
  if (!f.figure_type.length) box.appendChild(el("span", { class: "muted" }, "no figure types in this index"));
  ensureTypeOptions(chosen);
  for (const i of $$("#types input")) i.checked = chosen.includes(i.value);
  $("#n-medical").textContent = f.is_medical.true.toLocaleString("en");
  $("#n-nonmedical").textContent = f.is_medical.false.toLocaleString("en");
  $("#n-open").textContent = f.open.true.toLocaleString("en");
  if (f.year) {
    for (const id of ["#year_min", "#year_max"]) {
      $(id).min = f.year.min;
      $(id).max = f.year.max;
    }
    $("#year_min").placeholder = String(f.year.min);
    $("#year_max").placeholder = String(f.year.max);
  }
}

async function loadStats() {
  try {
    const h = await getJSON("/api/health");
    if (h.features && h.features.image_search) enableImageSearch();
    if (h.index) {
      $("#stats").textContent = `${plural(h.index.figures, "figure", "figures")} · ${plural(h.index.panels, "panel",
        "panels")} · ${plural(h.index.papers, "paper", "papers")} in this corpus`;
    }
  } catch (e) { /* the welcome text stands alone */ }
}

// ---- search by image: POST the file to /api/search (the matcher ranks the corpus's figures) -------------

function enableImageSearch() {
  $("#image-search").hidden = false;
  $("#image-file").addEventListener("change", (e) => { if (e.target.files.length) searchByImage(e.target.files[0]); });
  const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).includes("Files");
  document.addEventListener("dragover", (e) => { if (hasFiles(e)) { e.preventDefault(); document.body.classList.add("dropping"); } });
  document.addEventListener("dragleave", () => document.body.classList.remove("dropping"));
  document.addEventListener("drop", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    document.body.classList.remove("dropping");
    if (e.dataTransfer.files.length) searchByImage(e.dataTransfer.files[0]);
  });
}

async function searchByImage(file) {
  const token = ++searchToken;
  document.body.classList.remove("detail-mode");
  $("#detail").hidden = true;
  $("#welcome").hidden = true;
  $("#results").hidden = false;
  $("#results").replaceChildren();
  $("#more-row").hidden = true;
  if (!file.type.startsWith("image/")) {
    $("#status").textContent = `Error: ${file.name} is not an image`;
    return;
  }
  results = { key: null, state: { ...formState(), q: file.name, level: "figure" }, hits: [], seen: new Set(), total: 0,
    exact: true, next: null, scrollY: 0 };
  $("#status").textContent = "Searching by image…";
  try {
    const r = await fetch("/api/search?k=48", { method: "POST", body: file,
      headers: { "content-type": file.type, accept: "application/json" } });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(typeof body.detail === "string" ? body.detail : r.statusText || "request failed");
    if (token === searchToken) addPage(body);
  } catch (e) {
    if (token === searchToken) $("#status").textContent = "Error: " + e.message;
  }
}

// ---- API ------------------------------------------------------------------------------------------------

async function getJSON(url) {
  const r = await fetch(url, { headers: { accept: "application/json" } });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(typeof body.detail === "string" ? body.detail : r.statusText || "request failed");
  return body;
}

function apiParams(s, offset) {
  const p = new URLSearchParams({ q: s.q, level: s.level, k: String(PAGE) });
  if (offset) p.set("offset", String(offset));
  if (s.type.length) p.set("figure_type", s.type.join(","));
  if (s.medical) p.set("is_medical", s.medical === "1" ? "true" : "false");
  if (s.open) p.set("open", "true");
  if (s.year_min) p.set("year_min", s.year_min);
  if (s.year_max) p.set("year_max", s.year_max);
  return p;
}

const figureAPI = (paper, figure) => `/api/papers/${enc(paper)}/figures/${enc(figure)}`;
const hitKey = (h) => JSON.stringify([h.paper_id, h.figure_id, h.panel]);

// ---- figure images with boxes --------------------------------------------------------------------------

// Places a box over an image by percentages of the stored image's size (`size`, [w, h]); when the size is
// unknown, by the loaded image's natural size.
function placeBox(node, bbox, size, img) {
  const put = (w, h) => {
    if (!w || !h) return;
    const [x0, y0, x1, y1] = bbox;
    node.style.left = `${(100 * x0) / w}%`;
    node.style.top = `${(100 * y0) / h}%`;
    node.style.width = `${(100 * (x1 - x0)) / w}%`;
    node.style.height = `${(100 * (y1 - y0)) / h}%`;
  };
  if (size) put(size[0], size[1]);
  else if (img.complete && img.naturalWidth) put(img.naturalWidth, img.naturalHeight);
  else img.addEventListener("load", () => put(img.naturalWidth, img.naturalHeight), { once: true });
}

// The frame shrink-wraps the image at the largest size its box allows (CSS: --ar, the aspect ratio, and
// --w, the stored width, which caps upscaling); boxes inside are placed in % of it.
function figureFrame(url, size, alt) {
  const img = el("img", { src: url, alt, decoding: "async", width: size && size[0], height: size && size[1] });
  const frame = el("div", { class: "frame" }, img);
  const fit = (w, h) => {
    frame.style.setProperty("--ar", String(w / h));
    frame.style.setProperty("--w", String(w));
  };
  if (size && size[0] && size[1]) fit(size[0], size[1]);
  else img.addEventListener("load", () => img.naturalWidth && fit(img.naturalWidth, img.naturalHeight), { once: true });
  return { frame, img };
}

function noImage(text) {
  return el("div", { class: "noimg", role: "img", "aria-label": text }, text);
}

// ---- results ----------------------------------------------------------------------------------------------

let results = null; // {key, state, hits, seen, total, exact, next, scrollY}
let searchToken = 0;

function showWelcome() {
  results = null;
  $("#welcome").hidden = false;
  $("#results").hidden = true;
  $("#results").replaceChildren();
  $("#more-row").hidden = true;
  $("#status").replaceChildren();
  document.title = "figlink — figure search";
}

async function showResults(s) {
  const key = apiParams(s, 0).toString();
  $("#welcome").hidden = true;
  $("#results").hidden = false;
  document.title = `${s.q} · figlink`;
  if (results && results.key === key) { // back from a figure: the same results, where the reader was
    drawStatus();
    $("#more-row").hidden = results.next === null;
    requestAnimationFrame(() => window.scrollTo(0, results.scrollY || 0));
    return;
  }
  const token = ++searchToken;
  results = { key, state: s, hits: [], seen: new Set(), total: 0, exact: true, next: null, scrollY: 0 };
  $("#results").replaceChildren();
  $("#more-row").hidden = true;
  $("#status").textContent = "Searching…";
  try {
    const res = await getJSON("/api/search?" + apiParams(s, 0));
    if (token !== searchToken) return;
    addPage(res);
  } catch (e) {
    if (token === searchToken) $("#status").textContent = "Error: " + e.message;
  }
}

function addPage(res) {
  const grid = $("#results");
  for (const h of res.hits) {
    const k = hitKey(h);
    if (results.seen.has(k)) continue; // deeper pages re-rank with more candidates: skip repeats
    results.seen.add(k);
    results.hits.push(h);
    grid.appendChild(card(h, results.state));
  }
  results.total = Math.max(res.total, results.hits.length);
  results.exact = res.total_exact;
  results.next = res.next_offset;
  $("#more-row").hidden = results.next === null;
  drawStatus();
}

function drawStatus() {
  const s = results.state;
  const noun = s.level === "panel" ? ["panel", "panels"] : ["figure", "figures"];
  const status = $("#status");
  if (!results.hits.length) {
    status.replaceChildren(`No ${noun[1]} match `, el("span", { class: "query" }, `“${s.q}”`),
      filterCount(s) ? " with these filters. " : ".");
    if (filterCount(s)) status.append(clearButton("Clear the filters"));
    $("#results").replaceChildren(el("div", { class: "empty" }, "Try other words, or search panels instead of figures."));
    return;
  }
  const count = results.total.toLocaleString("en") + (results.exact ? "" : "+");
  status.replaceChildren(el("strong", {}, count), ` ${results.total === 1 && results.exact ? noun[0] : noun[1]} ranked for `,
    el("span", { class: "query" }, `“${s.q}”`));
  if (results.hits.length < results.total) status.append(` · showing ${results.hits.length.toLocaleString("en")}`);
}

function clearButton(text) {
  const b = el("button", { type: "button", class: "link-button" }, text);
  b.addEventListener("click", clearFilters);
  return b;
}

async function loadMore() {
  if (!results || results.next === null) return;
  const btn = $("#more");
  const token = searchToken;
  btn.disabled = true;
  btn.textContent = "Loading…";
  try {
    const res = await getJSON("/api/search?" + apiParams(results.state, results.next));
    if (token === searchToken) addPage(res);
  } catch (e) {
    $("#status").textContent = "Error: " + e.message;
  } finally {
    btn.disabled = false;
    btn.textContent = "Load more";
  }
}

function card(hit, s) {
  const label = figLabel(hit.label, hit.figure_id);
  const target = { ...s, paper: hit.paper_id, figure: hit.figure_id, panel: hit.panel || null };
  const title = hit.title || hit.paper_id;
  let thumb;
  if (hit.image_url) {
    const alt = `${label}${hit.panel ? ", panel " + hit.panel : ""} of “${title}”`;
    const { frame, img } = figureFrame(`${hit.image_url}?max_side=${THUMB}`, hit.image_size, alt);
    img.loading = "lazy";
    if (hit.bbox && hit.bbox.length === 4) {
      const box = el("div", { class: "box focus" });
      placeBox(box, hit.bbox, hit.image_size, img);
      frame.appendChild(box);
    }
    thumb = el("div", { class: "thumb" }, frame);
  } else {
    thumb = el("div", { class: "thumb" }, noImage(`${label} · no image in the corpus`));
  }
  const chips = el("div", { class: "chips" },
    hit.figure_type ? el("span", { class: "chip" }, typeName(hit.figure_type)) : null,
    hit.is_medical ? el("span", { class: "chip med" }, "medical") : null,
    hit.year ? el("span", { class: "chip" }, String(hit.year)) : null);
  const a = el("a", { class: "card", href: pageURL(target), dataset: { paper: hit.paper_id, figure: hit.figure_id } },
    thumb,
    el("div", { class: "card-body" },
      el("div", { class: "card-head" }, el("h3", {}, label),
        hit.panel ? el("span", { class: "panel-tag" }, "panel " + hit.panel) : null),
      captionText(hit.caption, hit.subcaption_spans, hit.subcaption, 120),
      hit.refs && hit.refs.length ? el("p", { class: "refs-snippet" }, "“" + refText(hit.refs[0]) + "”") : null,
      chips.childElementCount ? chips : null,
      el("p", { class: "paper" }, title)));
  a.addEventListener("click", (e) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return; // new tab etc.
    e.preventDefault();
    results.scrollY = window.scrollY;
    fromResults = true;
    navigate(target);
  });
  return a;
}

const refText = (r) => (typeof r === "string" ? r : (r && r.text) || "");

// Caption with the hit's subcaption spans (offsets into the caption) marked; falls back to finding the
// subcaption text in the caption.
function captionText(caption, spans, subcaption, lead) {
  caption = caption || "";
  const p = el("p", { class: "caption" });
  let ranges = (spans || []).filter((s) => Array.isArray(s) && s.length === 2 && s[0] < s[1])
    .map((s) => [Math.max(0, s[0]), Math.min(caption.length, s[1])]);
  if (!ranges.length && subcaption) {
    const i = caption.indexOf(subcaption);
    if (i >= 0) ranges = [[i, i + subcaption.length]];
  }
  ranges.sort((a, b) => a[0] - b[0]);
  let pos = 0;
  if (lead && ranges.length && ranges[0][0] > lead) { // start a short way before the first marked span
    const cut = caption.lastIndexOf(" ", ranges[0][0] - Math.round(lead / 3));
    if (cut > 0) {
      p.append("… ");
      pos = cut + 1;
    }
  }
  for (const [a, b] of ranges) {
    if (b <= pos) continue;
    const start = Math.max(a, pos);
    p.append(caption.slice(pos, start), el("mark", {}, caption.slice(start, b)));
    pos = b;
  }
  p.append(caption.slice(pos));
  return p;
}

// ---- one figure -----------------------------------------------------------------------------------------

async function showDetail(s) {
  const d = $("#detail");
  $("#welcome").hidden = true;
  $("#results").hidden = true;
  $("#more-row").hidden = true;
  $("#status").replaceChildren();
  d.hidden = false;
  d.replaceChildren(el("p", { class: "muted" }, "Loading the figure…"));
  let rec;
  try {
    rec = await getJSON(figureAPI(s.paper, s.figure));
  } catch (e) {
    d.replaceChildren(backLink(s), el("p", { id: "detail-error" }, "Error: " + e.message));
    $("#status").textContent = "Error: " + e.message;
    return;
  }
  const now = readState();
  if (now.paper !== s.paper || now.figure !== s.figure) return; // navigated away meanwhile
  d.replaceChildren(backLink(s), detailView(rec, s));
  document.title = `${figLabel(rec.figure.label, rec.figure.figure_id)} — ${rec.paper.title || rec.paper.paper_id} · figlink`;
  window.scrollTo(0, 0);
}

function backLink(s) {
  const back = searchOnly(s);
  const a = el("a", { class: "back", href: pageURL(back) }, back.q ? "← Back to results" : "← Search");
  a.addEventListener("click", (e) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    if (fromResults) history.back();
    else navigate(back);
  });
  return a;
}

function detailView(rec, s) {
  const f = rec.figure;
  const paper = rec.paper;
  const label = figLabel(f.label, f.figure_id);
  const panels = (rec.panels || []).filter(Boolean)
    .sort((a, b) => a.label.localeCompare(b.label, "en", { numeric: true }));
  const color = {};
  panels.forEach((p, i) => { color[p.label] = PANEL_COLORS[i % PANEL_COLORS.length]; });
  const root = el("article", { class: "detail-grid", dataset: { paper: paper.paper_id, figure: f.figure_id } });
  let pinned = panels.some((p) => p.label === s.panel) ? s.panel : null;

  // the image, every panel box outlined and labelled
  let frame = null;
  let img = null;
  const viewer = el("figure", { class: "viewer" });
  if (rec.image_url) {
    ({ frame, img } = figureFrame(rec.image_url, rec.image_size, `${label} of “${paper.title || paper.paper_id}”`));
    for (const p of panels) {
      if (!p.bbox || p.bbox.length !== 4) continue;
      const b = el("button", { type: "button", class: "pbox", "aria-label": "panel " + p.label,
        title: p.subcaption || "panel " + p.label, dataset: { label: p.label }, vars: { "--pc": color[p.label] } },
      el("span", { class: "plabel" }, p.label));
      placeBox(b, p.bbox, rec.image_size, img);
      frame.appendChild(b);
    }
    viewer.append(el("div", { class: "thumb" }, frame),
      el("figcaption", {}, panels.some((p) => p.bbox) ? "Point at a panel to see its part of the caption; click to keep it."
        : "No panel boxes were detected in this figure."));
  } else {
    viewer.append(noImage(`${label} · no image in the corpus`));
  }

  // caption cut at every subcaption span boundary; each piece knows the panels it describes
  const caption = f.caption || "";
  const cuts = new Set([0, caption.length]);
  const spansOf = panels.map((p) => [p.label, (p.subcaption_spans || [])
    .filter((x) => Array.isArray(x) && x.length === 2 && x[0] < x[1])
    .map((x) => [Math.max(0, x[0]), Math.min(caption.length, x[1])])]);
  for (const [, spans] of spansOf) for (const [a, b] of spans) { cuts.add(a); cuts.add(b); }
  const points = [...cuts].sort((a, b) => a - b);
  const cap = el("p", { class: "caption" });
  for (let i = 0; i + 1 < points.length; i++) {
    const [a, b] = [points[i], points[i + 1]];
    const labels = spansOf.filter(([, spans]) => spans.some(([x, y]) => x <= a && b <= y)).map(([l]) => l);
    const text = caption.slice(a, b);
    cap.append(labels.length ? el("span", { class: "sub", dataset: { panels: labels.join(" ") } }, text) : text);
  }

  const refs = el("ol", { class: "refs" });
  for (const r of f.inline_refs || []) {
    const text = refText(r);
    const i = r.mention ? text.indexOf(r.mention) : -1;
    const body = i >= 0 ? [text.slice(0, i), el("mark", {}, r.mention), text.slice(i + r.mention.length)] : [text];
    refs.appendChild(el("li", { dataset: { panels: (r.panels || []).join(" ") } }, ...body,
      r.section ? el("span", { class: "section" }, r.section) : null));
  }

  const ocr = (f.ocr || []).filter((o) => o && o.text);
  let ocrBlock = null;
  if (ocr.length) {
    const list = el("ul", { class: "ocr" });
    for (const o of ocr) {
      const li = el("li", { title: o.role ? typeName(o.role) : null }, o.text,
        o.role ? el("span", { class: "role" }, typeName(o.role)) : null);
      if (frame && o.bbox && o.bbox.length === 4) {
        const box = el("div", { class: "ocr-box" });
        li.addEventListener("mouseenter", () => { placeBox(box, o.bbox, rec.image_size, img); frame.appendChild(box); });
        li.addEventListener("mouseleave", () => box.remove());
      }
      list.appendChild(li);
    }
    ocrBlock = el("details", { class: "ocr-box-wrap" }, el("summary", {}, `Text in the figure (OCR, ${ocr.length})`), list);
  }

  const lic = paper.license || {};
  const doiHref = paper.doi ? "https://doi.org/" + paper.doi.split("/").map(enc).join("/") : null;
  const meta = el("div", { class: "meta" },
    paper.journal ? el("span", {}, paper.journal) : null,
    paper.year ? el("span", {}, String(paper.year)) : null,
    doiHref ? el("a", { href: doiHref, rel: "noopener noreferrer", target: "_blank", class: "doi" }, "doi:" + paper.doi) : null,
    paper.pmcid ? el("a", { href: `https://pmc.ncbi.nlm.nih.gov/articles/${enc(paper.pmcid)}/`, rel: "noopener noreferrer",
      target: "_blank" }, paper.pmcid) : null,
    el("span", { class: "licence" },
      isHttp(lic.url) ? el("a", { href: lic.url, rel: "noopener noreferrer license", target: "_blank" }, lic.spdx || "licence")
        : (lic.spdx || "licence not stated"),
      lic.open ? el("span", { class: "chip open" }, "open") : null));

  const chips = el("div", { class: "panel-chips" });
  for (const p of panels) {
    const boxed = p.bbox && p.bbox.length === 4;
    chips.appendChild(el("button", { type: "button", class: boxed ? "pchip" : "pchip nobox", dataset: { label: p.label },
      vars: { "--pc": color[p.label] }, title: (boxed ? "" : "(no box detected) ") + (p.subcaption || "") || null },
    p.label));
  }
  const kind = [f.figure_type && f.figure_type.label ? typeName(f.figure_type.label) : null,
    panels.length ? plural(panels.length, "panel", "panels") : null, f.is_medical ? "medical" : null].filter(Boolean);

  const info = el("div", { class: "info" },
    el("p", { class: "eyebrow" }, kind.join(" · ") || "figure"),
    el("h1", {}, label),
    el("p", { class: "paper-title" }, paper.title || paper.paper_id),
    meta,
    panels.length ? chips : null,
    el("h2", {}, "Caption"), cap,
    el("h2", {}, `Citing sentences (${(f.inline_refs || []).length})`),
    (f.inline_refs || []).length ? refs : el("p", { class: "muted" }, "No sentence of the paper cites this figure."),
    ocrBlock);
  root.append(viewer, info);

  // one panel at a time is lit: boxes, chips, subcaption pieces and citing sentences that name it
  const light = (lab) => {
    const c = lab ? color[lab] : null;
    for (const n of $$(".pbox, .pchip", root)) n.classList.toggle("on", n.dataset.label === lab);
    for (const n of $$("[data-panels]", root)) {
      const on = !!lab && n.dataset.panels.split(" ").includes(lab);
      n.classList.toggle("on", on);
      if (on) n.style.setProperty("--pc", c);
    }
    if (frame) frame.classList.toggle("has-on", !!lab);
  };
  const pin = (lab) => {
    pinned = pinned === lab ? null : lab;
    light(pinned);
    history.replaceState(null, "", pageURL({ ...readState(), panel: pinned }));
  };
  for (const n of $$(".pbox, .pchip", root)) {
    n.addEventListener("mouseenter", () => light(n.dataset.label));
    n.addEventListener("focus", () => light(n.dataset.label));
    n.addEventListener("mouseleave", () => light(pinned));
    n.addEventListener("blur", () => light(pinned));
    n.addEventListener("click", () => pin(n.dataset.label));
  }
  for (const n of $$(".sub", root)) {
    const lab = n.dataset.panels.split(" ")[0];
    n.addEventListener("mouseenter", () => light(lab));
    n.addEventListener("mouseleave", () => light(pinned));
  }
  light(pinned);
  return root;
}

// ---- wiring ---------------------------------------------------------------------------------------------

async function render() {
  const s = readState();
  syncForm(s);
  const detail = s.paper !== null && s.figure !== null;
  document.body.classList.toggle("detail-mode", detail);
  if (detail) return showDetail(s);
  $("#detail").hidden = true;
  $("#detail").replaceChildren();
  fromResults = false;
  if (!s.q) return showWelcome();
  return showResults(s);
}

function clearFilters() {
  navigate({ ...formState(), type: [], medical: "", open: false, year_min: "", year_max: "" });
}

function onFilterChange() {
  const s = formState();
  if (s.year_min && s.year_max && +s.year_min > +s.year_max) {
    $("#status").textContent = "Error: the first year is after the last";
    return;
  }
  navigate(s.q ? s : { ...s, q: "" });
}

history.scrollRestoration = "manual";
if (window.matchMedia("(max-width: 900px)").matches) $("#filters-box").open = false; // results first on phones
window.addEventListener("popstate", render);
$("#search-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const s = formState();
  if (s.q) navigate(s);
});
for (const r of $$("input[name=level]")) r.addEventListener("change", () => { if ($("#q").value.trim()) navigate(formState()); });
$("#filters").addEventListener("change", (e) => { if (e.target.matches("input")) onFilterChange(); });
$("#clear").addEventListener("click", clearFilters);
$("#more").addEventListener("click", loadMore);
$("#home").addEventListener("click", (e) => {
  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  $("#q").value = "";
  navigate({ ...readState(), q: "", paper: null, figure: null, panel: null, type: [], medical: "", open: false,
    year_min: "", year_max: "" });
});

loadFacets();
loadStats();
render();
