"""Turns executed notebooks into a static blog that needs no JavaScript and no network.

Usage: python publish.py EXECUTED_DIR SITE_DIR

For every executed notebook: SITE_DIR/<slug>/index.md (front matter + Markdown, a Hugo or Quarto page
bundle), index.html (the same, standalone), and figures/<name>.svg. A post shows prose, tables and figures:
each code cell is folded in a closed <details> under its output (the tag `hide-input` says the same), a cell
tagged `show-code` is printed open above it, and cells tagged `setup`, `parameters` or `remove-cell` are left
out; `remove-input` keeps a cell's output without its code, `remove-output` its code without its output (the
tags nbconvert, Quarto and Jupyter Book users already write). Under the title, one line says at what scale the
runs were made and where. Figures keep the name given in the notebook (figure("name", ...)), scale to the
reader's width, and carry alt text that says what they show. Tables arrive as Markdown. SITE_DIR/index.html
lists the posts, and SITE_DIR/README.md says how to put them in a blog.
"""
import datetime
import html
import json
import pathlib
import re
import shutil
import sys
import xml.etree.ElementTree as ET

import markdown
import nbformat
import nh3

HIDDEN_TAGS = {"setup", "parameters", "remove-cell"}
SHOWN_CODE_TAG = "show-code"
NO_CODE_TAG = "remove-input"
NO_OUTPUT_TAG = "remove-output"
FIGURE_NAME = re.compile(r'data-perfkit-figure="([a-z0-9-]+)"')
STYLE = """
body { font-family: Georgia, 'DejaVu Serif', serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.55; color: #222; overflow-wrap: break-word; }
img { max-width: 100%; height: auto; }
h1, h2, h3 { font-family: 'DejaVu Sans', Helvetica, Arial, sans-serif; line-height: 1.25; }
pre { background: #f6f6f4; padding: .8rem; overflow-x: auto; font-size: .85rem; }
code { font-family: 'DejaVu Sans Mono', Menlo, monospace; }
table { border-collapse: collapse; font-size: .85rem; margin: 1rem 0; display: block; overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: .25rem .5rem; text-align: right; }
th { background: #f0f0ee; }
figure { margin: 1.5rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .9rem; color: #555; }
.meta { color: #666; font-size: .9rem; }
.scale { border-left: 4px solid #b8860b; background: #fbf8ef; padding: .5rem .8rem; }
details.code { margin: .4rem 0; color: #555; font-size: .85rem; }
details.code summary { cursor: pointer; }
.post { display: flex; flex-wrap: wrap; gap: 1rem; margin: 1.5rem 0; align-items: flex-start; }
.post img { width: 14rem; max-width: 100%; height: auto; border: 1px solid #eee; }
.post > div { flex: 1 1 14rem; min-width: 0; }
"""


# What a post may contain once Markdown is rendered: no scripts, no event handlers, no frames or objects,
# no inline styles (which can carry url()); links and images only to http(s), mailto or relative URLs.
ALLOWED_TAGS = {"a", "article", "blockquote", "br", "code", "del", "details", "div", "em", "figcaption", "figure", "h1", "h2",
                "h3", "h4", "h5", "h6", "hr", "img", "li", "ol", "p", "pre", "span", "strong", "sub", "summary", "sup", "table",
                "tbody", "td", "th", "thead", "tr", "ul"}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title", "width", "height"},
                      "th": {"align"}, "td": {"align"}, "p": {"class"}, "div": {"class"}, "span": {"class"},
                      "details": {"class"}, "code": {"class"}}


class NotExecuted(Exception):
    pass


def sanitize(fragment: str) -> str:
    """Allow-list sanitising of rendered HTML (nh3, the Rust ammonia library): the last line of defence."""
    return nh3.clean(fragment, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, url_schemes={"http", "https", "mailto"},
                     clean_content_tags={"script", "style", "iframe", "object", "embed", "template"}, link_rel=None)


def text_md(text: str) -> str:
    """Generated Markdown (kernel output, captions) is data, never markup: `<` cannot open a tag. The kit
    escapes `& < >` already; this catches whatever a notebook interpolated itself."""
    return text.replace("<", "&lt;")


def text_block(text: str) -> str:
    """Plain text output as an escaped <pre> block, so not even index.md holds a raw tag."""
    return "<pre><code>" + html.escape(text.rstrip(), quote=False) + "</code></pre>"


def folded_code(source: str) -> str:
    """A code cell as a closed <details>: the reader sees the story, and the code is one click away. The blank
    lines around <pre> keep it one HTML block in CommonMark too, even when the code has blank lines."""
    return ("<details class=\"code\"><summary>Code</summary>\n\n<pre><code class=\"language-kotlin\">"
            + html.escape(source.strip(), quote=False) + "</code></pre>\n\n</details>")


SCALE_NAMES = {"quick": "quick demo", "reference": "reference", "full": "full"}


def scale_line(runs: dict, study: str) -> str:
    """One line under the title, from the runs' manifests (the kit's text/x-perfkit-runs): the scale, the forks
    per cell and the host; under 3 forks, that the post can claim nothing and what to run for an answer."""
    scale, forks = runs.get("scale"), runs.get("forks")
    if scale not in SCALE_NAMES:
        return ""
    where = html.escape("; ".join(runs.get("hosts", [])) or "an unnamed host", quote=False)
    jdks = html.escape(", ".join(runs.get("jdks", [])), quote=False)
    forks_text = f"{forks} fork{'' if forks == 1 else 's'} per cell" if isinstance(forks, int) and forks > 0 else "forks unknown"
    line = f"<strong>Scale: {SCALE_NAMES[scale]}</strong>, {forks_text}, on {where}" + (f" with JDK {jdks}" if jdks else "") + "."
    if scale == "quick" or not isinstance(forks, int) or forks < 3:
        command = f"./bench run {study}" if re.fullmatch(r"[a-z0-9-]+", study or "") else "./bench run STUDY"
        line += (" With under 3 forks per cell this post can claim nothing: it shows shapes, not answers. For an answer,"
                 f" run <code>{command}</code> (full scale) or read the committed reference runs"
                 " (<code>./bench notebooks --runs reference</code>).")
    return f'<p class="scale">{line}</p>'


ANSWER_COUNTS = {"holds": ("holds", "hold"), "does-not-hold": ("does not hold", "do not hold"),
                 "cannot-tell": ("cannot tell here", "cannot tell here")}


def at_a_glance(claims: list) -> str:
    """Under the title: how many of the original's claims hold here, and each with what was measured, from the claims
    tables the kit drew (text/x-perfkit-claims; the claims' texts are the kit's Markdown, data already escaped)."""
    if not claims:
        return ""
    counts = []
    for answer, (one, many) in ANSWER_COUNTS.items():
        n = sum(1 for c in claims if c.get("answer") == answer)
        if n:
            counts.append(f"{n} {one if n == 1 else many}")
    # a claim this host cannot answer says why on the first screen: the precondition that failed, with its number
    items = "\n".join(f"- **{html.escape(c.get('words', ''), quote=False)}**: {c.get('original', '')} ({c.get('here', '')})"
                      + (f". Why: {c['reason']}" if c.get("answer") == "cannot-tell" and c.get("reason") else "")
                      for c in claims)
    return (f'<p class="glance"><strong>The original\'s claims on this host:</strong> {", ".join(counts)}. Each answer'
            " rests on an interval or a bracket over the forks, given only where its preconditions held (the machine below"
            " its wall, the factor live, the driver on time, warm JVMs); the table below lists the checks.</p>\n\n" + items)


def at_title(blocks: list, heading: str = "", after: str = "") -> list:
    """The blocks with their first `# ` heading replaced by [heading] (when given) and [after] right under it."""
    for i, block in enumerate(blocks):
        lines = block.split("\n")
        for j, text in enumerate(lines):
            if text.startswith("# "):
                head = "\n".join(lines[:j] + [heading or text])
                tail = "\n".join(lines[j + 1:]).strip("\n")
                return blocks[:i] + [head] + ([after] if after else []) + ([tail] if tail else []) + blocks[i + 1:]
    return ([heading] if heading else []) + ([after] if after else []) + blocks


def yaml_value(value) -> str:
    # JSON strings and lists are valid YAML flow scalars; \u003c keeps a `<` from ever appearing raw.
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page(title: str, body_html: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body_html}\n</body>\n</html>\n")


SVG = "{http://www.w3.org/2000/svg}"
# what a Lets-Plot SVG names each text it draws
FIGURE_TEXTS = ("plot-title", "axis-title-x", "axis-title-y", "legend-title", "legend-item")


def figure_texts(svg: str) -> dict:
    """The figure's own titles, axis titles and legend, by the class Lets-Plot gives them; empty when it is not one."""
    try:
        root = ET.fromstring(svg)
    except ET.ParseError:
        return {}
    # a long legend label is wrapped into several texts of one entry's group: read them back as one label
    parent = {child: element for element in root.iter() for child in element}
    lines = {}
    for element in root.iter(SVG + "text"):
        kind = element.get("class", "")
        text = " ".join("".join(element.itertext()).split())
        if kind in FIGURE_TEXTS and text:
            up = parent.get(parent.get(element))  # Lets-Plot: text in a line's group, in the entry's group
            entry = up if kind == "legend-item" and up is not None else element
            lines.setdefault((kind, entry), []).append(text)
    found = {}
    for (kind, _), texts in lines.items():
        text = " ".join(texts)
        if text not in found.setdefault(kind, []):
            found[kind].append(text)
    return found


def alt_text(svg: str, name: str) -> str:
    """What the figure shows, in words a screen reader can say, from what it draws: its title, what is plotted against
    what, and what the legend tells apart. The caption below says what it means; the alt text does not repeat it."""
    t = figure_texts(svg)
    first = lambda kind: (t.get(kind) or [""])[0]
    if not (first("axis-title-x") or first("axis-title-y")):
        return f"Figure {name}"
    words = "Chart" + (f" titled {first('plot-title')}" if first("plot-title") else "") + ": "
    words += f"{first('axis-title-y') or 'a value'} against {first('axis-title-x') or 'a category'}"
    items = t.get("legend-item", [])
    if items:
        shown = ", ".join(items[:8]) + (f" and {len(items) - 8} more" if len(items) > 8 else "")
        words += f", one series per {first('legend-title') or 'group'} ({shown})"
    return words + "."


def markdown_alt(text: str) -> str:
    """Alt text inside ![...]: nothing in it may close the brackets, open a tag or turn into emphasis."""
    return re.sub(r"([\\\[\]*_`])", r"\\\1", text).replace("&", "&amp;").replace("<", "&lt;")


def scalable(svg: str) -> str:
    """The figure with a viewBox and a width of 100%: it keeps its shape and fits a phone's width in any blog's page,
    where a fixed 720 px would overflow it; an <img> of it takes the width of the text around it."""
    head = re.match(r"<svg\b[^>]*>", svg)
    if not head:
        return svg
    tag = head.group(0)
    width, height = re.search(r'\swidth="([\d.]+)"', tag), re.search(r'\sheight="([\d.]+)"', tag)
    if not (width and height) or "viewBox=" in tag:
        return svg
    new = tag.replace(width.group(0), ' width="100%"').replace(height.group(0), "")
    new = new[:-1] + f' viewBox="0 0 {width.group(1)} {height.group(1)}">'
    return new + svg[len(tag):]


SITE_README = """# These posts in a blog

Each folder is one post as a page bundle: `index.md` with its front matter (`title`, `date`: the day its newest
run ended, `lastmod`: the day it was published, `description`, `categories`, `tags`, `images`: its lead figure)
and `figures/*.svg` beside it. Copy a folder into your site's posts, e.g. `content/posts/<slug>/` in Hugo.

A post folds its code cells in `<details>` and marks its scale line and its claims with a class, so its Markdown
holds raw HTML (no script: every page was sanitised with an allow-list):

- **Hugo** drops raw HTML unless the site allows it, so set, in `hugo.toml`:

  ```toml
  [markup.goldmark.renderer]
  unsafe = true
  ```
- **Quarto** and **Jekyll** (kramdown) pass it through as it is.

The figures are SVG without scripts, and scale to the page's width. `index.html` in each folder is the same post
as a standalone page, for sites that take HTML.
"""


def front_matter(fields: dict) -> str:
    return "---\n" + "".join(f"{k}: {yaml_value(v)}\n" for k, v in fields.items()) + "---\n"


def convert(nb_path: pathlib.Path, site: pathlib.Path) -> dict:
    nb = nbformat.read(nb_path, as_version=4)
    meta = nb.metadata.get("perfkit", {})
    slug = meta.get("slug") or nb_path.stem
    out = site / slug
    shutil.rmtree(out, ignore_errors=True)
    (out / "figures").mkdir(parents=True)
    blocks, figures, runs, claims = [], [], {}, []
    for index, cell in enumerate(nb.cells, start=1):
        if cell.cell_type == "markdown":
            blocks.append(cell.source)
            continue
        tags = set(cell.metadata.get("tags", []))
        if cell.cell_type != "code" or HIDDEN_TAGS & tags:
            continue
        if cell.get("execution_count") is None and cell.source.strip():
            raise NotExecuted(f"{nb_path.name}: cell {index} was never executed; run ./bench notebooks first")
        # a cell tagged show-code prints its code before its result; any other folds it after, under what it made
        shown = SHOWN_CODE_TAG in tags
        code = cell.source.strip() and NO_CODE_TAG not in tags
        if code and shown:
            blocks.append("```kotlin\n" + cell.source.strip() + "\n```")
        for o in cell.get("outputs", []):
            kind = o.get("output_type")
            if kind == "error":
                raise NotExecuted(f"{nb_path.name}: cell {index} failed: {o.get('ename')}: {o.get('evalue')}")
            if NO_OUTPUT_TAG in tags:
                continue
            if kind == "stream":
                blocks.append(text_block(o.get("text", "")))
                continue
            data = o.get("data", {})
            if "text/x-perfkit-runs" in data:
                runs = json.loads(data["text/x-perfkit-runs"])
            if "text/x-perfkit-claims" in data:
                claims += json.loads(data["text/x-perfkit-claims"])
            if "image/svg+xml" in data:
                svg = data["image/svg+xml"]
                found = FIGURE_NAME.search(svg)
                name = found.group(1) if found else f"figure-{len(figures) + 1}"
                if name in figures:  # a second figure of the same name would overwrite the first
                    taken, k = name, 2
                    while f"{taken}-{k}" in figures:
                        k += 1
                    name = f"{taken}-{k}"
                    print(f"publish: {nb_path.name}: cell {index} draws a second figure named {taken!r}; it is figures/{name}.svg",
                          file=sys.stderr)
                (out / "figures" / f"{name}.svg").write_text(scalable(svg), encoding="utf-8")
                # the kit's caption, already Markdown that reads as itself (its mdText: the kit's one escaper); a
                # figure from elsewhere is named by its file, never by its unescaped text
                caption = data.get("text/x-perfkit-caption", name).strip()
                figures.append(name)
                blocks.append(f"![{markdown_alt(alt_text(svg, name))}](figures/{name}.svg)\n\n*{caption}*")
            elif "text/markdown" in data:
                blocks.append(text_md(data["text/markdown"]))
            elif "text/plain" in data:
                blocks.append(text_block(data["text/plain"]))
        if code and not shown:
            blocks.append(folded_code(cell.source))
    # a title the runs give (compare: what was compared) wins over the notebook's, in the page and its heading
    title = runs.get("title") or meta.get("title") or next((l[2:] for c in nb.cells if c.cell_type == "markdown"
                                                             for l in c.source.splitlines() if l.startswith("# ")), slug)
    today = datetime.date.today().isoformat()
    info = {
        "title": title,
        # dated by its data: re-publishing the same runs keeps the date, and lastmod says when it was written
        "date": runs.get("ended") or today,
        "lastmod": today,
        "description": meta.get("summary", ""),
        "summary": meta.get("summary", ""),
        "categories": meta.get("categories", ["performance"]),
        "tags": meta.get("tags", []),
        "images": [f"figures/{figures[0]}.svg"] if figures else [],
        "host": "; ".join(runs.get("hosts", [])),
        "jdk": ", ".join(runs.get("jdks", [])),
        "runs": runs.get("runIds", []),
        "data": "committed reference runs" if runs.get("reference") else "runs on the host above",
        "scale": SCALE_NAMES.get(runs.get("scale"), ""),
        "forks": runs.get("forks", 0),
    }
    # the runs' title is data (group names): the kit sends it as Markdown too; the notebook's own is authored Markdown
    title_md = runs.get("titleMarkdown") or meta.get("title") or title
    blocks = at_title(blocks, heading="# " + runs["titleMarkdown"] if runs.get("titleMarkdown") else "",
                      after="\n\n".join(filter(None, [scale_line(runs, runs.get("study", slug).split(",")[0].strip()),
                                                         at_a_glance(claims)])))
    body_md = "\n\n".join(b.strip("\n") for b in blocks) + "\n"
    (out / "index.md").write_text(front_matter(info) + "\n" + body_md, encoding="utf-8")
    meta_line = (f"<p class=\"meta\">{html.escape(info['date'])} · {html.escape(info['host'])} · JDK {html.escape(info['jdk'])}"
                 f" · {len(info['runs'])} run(s) · <a href=\"../index.html\">all posts</a></p>")
    body_html = sanitize(markdown.markdown(body_md, extensions=["tables", "fenced_code"]))
    (out / "index.html").write_text(page(title, meta_line + "\n<article>\n" + body_html + "\n</article>"), encoding="utf-8")
    return dict(info, slug=slug, figures=figures, title_md=title_md)


def scale_word(post: dict) -> str:
    """"quick demo, 1 fork · " for the index: the scale is the first thing a reader needs of a post."""
    if not post.get("scale"):
        return ""
    forks = post.get("forks")
    return post["scale"] + (f", {forks} fork{'' if forks == 1 else 's'}" if isinstance(forks, int) and forks > 0 else "") + " · "


def index(posts: list, site: pathlib.Path) -> None:
    items = []
    for p in sorted(posts, key=lambda p: p["title"]):
        thumb = f"<img src=\"{p['slug']}/figures/{p['figures'][0]}.svg\" alt=\"{html.escape(p['title'] + ': first figure')}\">" if p["figures"] else ""
        items.append(f"<div class=\"post\">{thumb}<div><h2><a href=\"{p['slug']}/index.html\">{html.escape(p['title'])}</a></h2>"
                     f"<p class=\"meta\">{html.escape(p['date'])} · {html.escape(scale_word(p))}{html.escape(p['host'])}</p><p>{html.escape(p['summary'])}</p></div></div>")
    # thumbnails and titles are ours, but the allow-list applies to every page all the same
    items = [sanitize(i) for i in items]
    (site / "index.html").write_text(page("perfkit studies", "<h1>perfkit studies</h1>\n" + "\n".join(items)), encoding="utf-8")
    (site / "index.md").write_text("# perfkit studies\n\n" + "".join(
        f"- [{p['title_md']}]({p['slug']}/index.md) ({scale_word(p).rstrip(' ·') or 'scale unknown'}): {p['summary']}\n" for p in sorted(posts, key=lambda p: p["title"])), encoding="utf-8")


def main() -> int:
    executed, site = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    if not executed.is_dir():
        print(f"publish: --from {executed} is not a folder of executed notebooks; run ./bench notebooks first", file=sys.stderr)
        return 2
    notebooks = sorted(executed.glob("*.ipynb"))
    if not notebooks:
        print(f"publish: no executed notebooks in {executed}; run ./bench notebooks first", file=sys.stderr)
        return 2
    if site.exists() and not site.is_dir():
        print(f"publish: --out {site} is a file, not a folder", file=sys.stderr)
        return 2
    try:
        site.mkdir(parents=True, exist_ok=True)
        probe = site / ".perfkit-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        print(f"publish: cannot write the site to {site}: {e.strerror or e}", file=sys.stderr)
        return 2
    try:
        posts = [convert(nb, site) for nb in notebooks]
    except NotExecuted as e:
        print(f"publish: {e}", file=sys.stderr)
        return 1
    index(posts, site)
    (site / "README.md").write_text(SITE_README, encoding="utf-8")
    for p in posts:
        print(f"[publish] {p['slug']}: {len(p['figures'])} figure(s) -> {site / p['slug'] / 'index.html'}", file=sys.stderr)
    print(site / "index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
