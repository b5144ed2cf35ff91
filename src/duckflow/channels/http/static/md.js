// Markdown for the model's replies, safe by construction: the text is never parsed as HTML. Every
// piece becomes a DOM node whose text is set with textContent, so `<img onerror=…>` from a model
// shows as those characters. Blocks: paragraphs, ``` fences, # headings, - and 1. lists, > quotes,
// ---; inline: `code`, **bold**, *italic* / _italic_, [text](url) and bare URLs — links only to
// http(s) (anything else stays text), opened in a new tab without a referrer.
"use strict";

const Md = (() => {
  const LINK_OK = /^https?:\/\/[^\s]+$/i;
  const INLINE = String.raw`(\x60+)([^\x60]|[^\x60][\s\S]*?[^\x60])\1(?!\x60)` +   // `code`
    String.raw`|\[([^\]\n]+)\]\(([^()\s]+)\)` +                                         // [text](url)
    String.raw`|\*\*(?=\S)([\s\S]*?\S)\*\*` +                                           // **bold**
    String.raw`|\*(?=[^\s*])([^*\n]*?[^\s*])\*` +                                       // *italic*
    String.raw`|(?<![\w])_(?=[^\s_])([^_\n]*?[^\s_])_(?![\w])` +                        // _italic_
    String.raw`|(https?:\/\/[^\s<>()\x60]*[^\s<>()\x60.,;:!?'"])`;                      // a bare URL

  function node(tag, cls) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    return n;
  }

  function link(parent, label, url) {
    if (!LINK_OK.test(url)) { parent.appendChild(document.createTextNode(label === url ? url : `[${label}](${url})`)); return; }
    const a = node("a");
    a.href = url; a.target = "_blank"; a.rel = "noopener noreferrer nofollow";
    a.textContent = label;
    parent.appendChild(a);
  }

  function text(parent, s) {  // plain text; a line break inside a paragraph stays one
    s.split("\n").forEach((part, i) => {
      if (i) parent.appendChild(node("br"));
      if (part) parent.appendChild(document.createTextNode(part));
    });
  }

  function inline(parent, s) {
    const re = new RegExp(INLINE, "g");
    let last = 0, m;
    while ((m = re.exec(s))) {
      if (m.index > last) text(parent, s.slice(last, m.index));
      last = re.lastIndex;
      if (m[1]) { const c = node("code"); c.textContent = m[2].replace(/^ (.+) $/, "$1"); parent.appendChild(c); }
      else if (m[3]) link(parent, m[3], m[4]);
      else if (m[5]) { const b = node("strong"); inline(b, m[5]); parent.appendChild(b); }
      else if (m[6] || m[7]) { const i = node("em"); inline(i, m[6] || m[7]); parent.appendChild(i); }
      else if (m[8]) link(parent, m[8], m[8]);
    }
    if (last < s.length) text(parent, s.slice(last));
  }

  const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)[^\n]*$/;
  const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(\s+#+)?\s*$/;
  const ITEM = /^(\s{0,6})([-*+]|\d{1,9}[.)])\s+(.*)$/;
  const QUOTE = /^ {0,3}>\s?(.*)$/;
  const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
  const starts = (line) => FENCE.test(line) || HEADING.test(line) || ITEM.test(line) || QUOTE.test(line) || RULE.test(line);

  function blocks(parent, lines) {
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if (!line.trim()) { i++; continue; }
      if ((m = line.match(FENCE))) {  // a code block, to its closing fence (or the end, while it streams)
        const body = [];
        for (i++; i < lines.length && !(lines[i].trim().startsWith(m[1][0].repeat(3)) && lines[i].trim().replace(/[`~]/g, "") === ""); i++) body.push(lines[i]);
        i++;
        const pre = node("pre", "code"), code = node("code");
        if (m[2]) code.dataset.lang = m[2];
        code.textContent = body.join("\n");
        pre.appendChild(code); parent.appendChild(pre);
      } else if ((m = line.match(HEADING))) {
        const h = node(m[1].length <= 2 ? "h3" : "h4");
        inline(h, m[2]); parent.appendChild(h); i++;
      } else if (RULE.test(line)) {
        parent.appendChild(node("hr")); i++;
      } else if (QUOTE.test(line)) {
        const inner = [];
        while (i < lines.length && (m = lines[i].match(QUOTE))) { inner.push(m[1]); i++; }
        const q = node("blockquote"); blocks(q, inner); parent.appendChild(q);
      } else if ((m = line.match(ITEM))) {
        const ordered = /\d/.test(m[2]);
        const list = node(ordered ? "ol" : "ul");
        if (ordered && parseInt(m[2], 10) !== 1) list.start = parseInt(m[2], 10);
        let item = null, body = [];
        const flush = () => { if (item) { inline(item, body.join("\n")); list.appendChild(item); } };
        while (i < lines.length) {
          const l = lines[i], it = l.match(ITEM);
          if (it && /\d/.test(it[2]) === ordered) { flush(); item = node("li"); body = [it[3]]; i++; continue; }
          if (!l.trim() || starts(l)) break;
          body.push(l.trim()); i++;  // a continuation of the item
        }
        flush(); parent.appendChild(list);
      } else {
        const para = [];
        while (i < lines.length && lines[i].trim() && !(para.length && starts(lines[i]))) { para.push(lines[i]); i++; }
        const p = node("p"); inline(p, para.join("\n")); parent.appendChild(p);
      }
    }
  }

  function render(src) {
    const frag = document.createDocumentFragment();
    blocks(frag, String(src || "").replace(/\r\n?/g, "\n").split("\n"));
    return frag;
  }

  return { render };
})();
