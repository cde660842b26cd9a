"""Turns executed notebooks into a static blog that needs no JavaScript and no network.

Usage: python publish.py EXECUTED_DIR SITE_DIR

For every executed notebook: SITE_DIR/<slug>/index.md (front matter + Markdown), index.html (the same,
standalone), and figures/<name>.svg. A post shows prose, tables and figures: each code cell is folded in a
closed <details> under its output, a cell tagged `show-code` is printed open above it, and cells tagged
`setup` or `parameters` are left out. Under the title, one line says at what scale the runs were made and where. Figures keep the name
given in the notebook (figure("name", ...)). Tables arrive as Markdown. SITE_DIR/index.html lists the posts.
"""
import datetime
import html
import json
import pathlib
import re
import shutil
import sys

import markdown
import nbformat
import nh3

HIDDEN_TAGS = {"setup", "parameters"}
SHOWN_CODE_TAG = "show-code"
FIGURE_NAME = re.compile(r'data-perfkit-figure="([a-z0-9-]+)"')
STYLE = """
body { font-family: Georgia, 'DejaVu Serif', serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.55; color: #222; }
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
.post { display: flex; gap: 1rem; margin: 1.5rem 0; align-items: flex-start; }
.post img { width: 14rem; height: auto; border: 1px solid #eee; }
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
        if cell.cell_type != "code" or HIDDEN_TAGS & set(cell.metadata.get("tags", [])):
            continue
        if cell.get("execution_count") is None and cell.source.strip():
            raise NotExecuted(f"{nb_path.name}: cell {index} was never executed; run ./bench notebooks first")
        # a cell tagged show-code prints its code before its result; any other folds it after, under what it made
        shown = SHOWN_CODE_TAG in cell.metadata.get("tags", [])
        if cell.source.strip() and shown:
            blocks.append("```kotlin\n" + cell.source.strip() + "\n```")
        for o in cell.get("outputs", []):
            kind = o.get("output_type")
            if kind == "error":
                raise NotExecuted(f"{nb_path.name}: cell {index} failed: {o.get('ename')}: {o.get('evalue')}")
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
                (out / "figures" / f"{name}.svg").write_text(svg, encoding="utf-8")
                # the kit's caption, already Markdown that reads as itself (its mdText: the kit's one escaper); a
                # figure from elsewhere is named by its file, never by its unescaped text
                caption = data.get("text/x-perfkit-caption", name).strip()
                figures.append(name)
                blocks.append(f"![{caption}](figures/{name}.svg)\n\n*{caption}*")
            elif "text/markdown" in data:
                blocks.append(text_md(data["text/markdown"]))
            elif "text/plain" in data:
                blocks.append(text_block(data["text/plain"]))
        if cell.source.strip() and not shown:
            blocks.append(folded_code(cell.source))
    # a title the runs give (compare: what was compared) wins over the notebook's, in the page and its heading
    title = runs.get("title") or meta.get("title") or next((l[2:] for c in nb.cells if c.cell_type == "markdown"
                                                             for l in c.source.splitlines() if l.startswith("# ")), slug)
    info = {
        "title": title,
        "date": datetime.date.today().isoformat(),
        "summary": meta.get("summary", ""),
        "tags": meta.get("tags", []),
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
    for p in posts:
        print(f"[publish] {p['slug']}: {len(p['figures'])} figure(s) -> {site / p['slug'] / 'index.html'}", file=sys.stderr)
    print(site / "index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
