// figlink web page: search, result grid, figure detail. Paper text only ever goes through
// textContent / createTextNode, never innerHTML, so markup in captions is shown, not run.
"use strict";

const $ = (sel) => document.querySelector(sel);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return node;
}

// Caption with the panel's subcaption spans (offsets into the caption) marked; falls back to
// finding the subcaption text in the caption.
function captionNode(caption, spans, subcaption) {
  const p = el("p", { class: "caption" });
  caption = caption || "";
  let ranges = (spans || []).filter((s) => Array.isArray(s) && s.length === 2 && s[0] < s[1])
    .map((s) => [Math.max(0, s[0]), Math.min(caption.length, s[1])]);
  if (!ranges.length && subcaption) {
    const i = caption.indexOf(subcaption);
    if (i >= 0) ranges = [[i, i + subcaption.length]];
  }
  ranges.sort((a, b) => a[0] - b[0]);
  let pos = 0;
  for (const [s, e] of ranges) {
    if (s < pos) continue;
    p.appendChild(document.createTextNode(caption.slice(pos, s)));
    p.appendChild(el("mark", {}, caption.slice(s, e)));
    pos = e;
  }
  p.appendChild(document.createTextNode(caption.slice(pos)));
  return p;
}

// Figure image with panel boxes drawn once the natural size is known; `boxes` = [{bbox, main}].
function figureImage(url, label, boxes) {
  const wrap = el("div", { class: "thumb" });
  if (!url) {
    wrap.appendChild(el("div", { class: "noimg" }, label || "figure (no image in the corpus)"));
    return wrap;
  }
  const img = el("img", { src: url, alt: label || "figure", loading: "lazy" });
  img.addEventListener("load", () => {
    for (const b of boxes || []) {
      if (!b.bbox || b.bbox.length !== 4 || !img.naturalWidth) continue;
      const [x0, y0, x1, y1] = b.bbox;
      const box = el("div", { class: b.main ? "outline" : "outline other" });
      box.style.left = (100 * x0 / img.naturalWidth) + "%";
      box.style.top = (100 * y0 / img.naturalHeight) + "%";
      box.style.width = (100 * (x1 - x0) / img.naturalWidth) + "%";
      box.style.height = (100 * (y1 - y0) / img.naturalHeight) + "%";
      wrap.appendChild(box);
    }
  });
  wrap.appendChild(img);
  return wrap;
}

function refList(refs) {
  const ul = el("ul", { class: "refs" });
  for (const r of refs || []) ul.appendChild(el("li", {}, typeof r === "string" ? r : r.text));
  return ul;
}

function card(hit) {
  const title = el("h3", {}, hit.label || hit.figure_id);
  if (hit.panel) title.appendChild(el("span", { class: "panel-tag" }, "panel " + hit.panel));
  const c = el("article", { class: "card", tabindex: "0", dataset: { paper: hit.paper_id, figure: hit.figure_id } },
    figureImage(hit.image_url, hit.label, hit.bbox ? [{ bbox: hit.bbox, main: true }] : []),
    title,
    el("div", { class: "meta" }, (hit.title || hit.paper_id) + (hit.year ? " (" + hit.year + ")" : "")),
    captionNode(hit.caption, hit.subcaption_spans, hit.subcaption),
    hit.refs && hit.refs.length ? refList(hit.refs) : null);
  const open = () => showFigure(hit.paper_id, hit.figure_id, hit.panel);
  c.addEventListener("click", open);
  c.addEventListener("keydown", (e) => { if (e.key === "Enter") open(); });
  return c;
}

async function getJSON(url) {
  const r = await fetch(url);
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.detail || r.statusText);
  return body;
}

async function runSearch(q, level, openOnly) {
  const status = $("#status");
  const grid = $("#results");
  $("#detail").hidden = true;
  grid.hidden = false;
  grid.replaceChildren();
  status.textContent = "Searching…";
  const params = new URLSearchParams({ q, level, k: "24" });
  if (openOnly) params.set("open", "true");
  try {
    const res = await getJSON("/api/search?" + params);
    status.textContent = res.hits.length ? `${res.hits.length} ${level === "panel" ? "panels" : "figures"} for “${q}”`
      : `No results for “${q}”`;
    for (const h of res.hits) grid.appendChild(card(h));
  } catch (e) {
    status.textContent = "Error: " + e.message;
  }
}

async function showFigure(paperId, figureId, panel) {
  const d = $("#detail");
  const status = $("#status");
  try {
    const rec = await getJSON(`/api/papers/${encodeURIComponent(paperId)}/figures/${encodeURIComponent(figureId)}`);
    const f = rec.figure;
    const chosen = (rec.panels || []).find((p) => p && p.label === panel);
    const boxes = (rec.panels || []).filter((p) => p && p.bbox).map((p) => ({ bbox: p.bbox, main: p.label === panel }));
    const back = el("button", { class: "back", type: "button" }, "← results");
    back.addEventListener("click", () => { d.hidden = true; $("#results").hidden = false; });
    const heading = el("h2", {}, (f.label || f.figure_id) + " — " + (rec.paper.title || rec.paper.paper_id));
    if (panel) heading.appendChild(el("span", { class: "panel-tag" }, "panel " + panel));
    const lic = rec.paper.license || {};
    d.replaceChildren(back, heading,
      el("div", { class: "meta" }, [rec.paper.journal, rec.paper.year, rec.paper.doi ? "doi:" + rec.paper.doi : null,
        lic.spdx ? "license: " + lic.spdx : null].filter(Boolean).join(" · ")),
      figureImage(rec.image_url, f.label, boxes),
      captionNode(f.caption, chosen ? chosen.subcaption_spans : [], chosen ? chosen.subcaption : null),
      el("h3", {}, `Citing sentences (${(f.inline_refs || []).length})`),
      refList(f.inline_refs));
    d.hidden = false;
    $("#results").hidden = true;
    window.scrollTo(0, 0);
  } catch (e) {
    status.textContent = "Error: " + e.message;
  }
}

$("#search-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const q = $("#q").value.trim();
  if (q) runSearch(q, $("#level").value, $("#open").checked);
});
