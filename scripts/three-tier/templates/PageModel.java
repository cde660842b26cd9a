package perfkit.threetier.templates;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * The page's in-memory model, built once per server: a title and {@code items} list items. JavaBean getters, so
 * the JSP scriptlets and FreeMarker's default object wrapper read it the same way. The text holds characters that
 * need HTML escaping ({@code &}, {@code '}, {@code <}), so every engine does the escaping a real page would.
 */
public final class PageModel {
    private final String title;
    private final List<Item> items;

    public PageModel(int items) {
        this.title = "Today's picks: fruit & vegetables";
        List<Item> list = new ArrayList<>(items);
        for (int i = 1; i <= items; i++)
            list.add(new Item(i, "Item " + i + (i % 3 == 0 ? " <fresh> & local" : ""), String.format(Locale.ROOT, "%d.%02d", 1 + i % 17, (i * 37) % 100)));
        this.items = Collections.unmodifiableList(list);
    }

    public String getTitle() { return title; }

    public List<Item> getItems() { return items; }

    /** One list item: an id, a name to escape, and a price already formatted (so no engine formats numbers). */
    public static final class Item {
        private final int id;
        private final String name, price;

        Item(int id, String name, String price) {
            this.id = id;
            this.name = name;
            this.price = price;
        }

        public int getId() { return id; }

        public String getName() { return name; }

        public String getPrice() { return price; }
    }

    /** HTML escaping as FreeMarker's HTML output format does it (&lt; &gt; &amp; &quot; &#39;), for JSP and plain. */
    public static String escape(String s) {
        StringBuilder out = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            String rep = switch (c) {
                case '<' -> "&lt;";
                case '>' -> "&gt;";
                case '&' -> "&amp;";
                case '"' -> "&quot;";
                case '\'' -> "&#39;";
                default -> null;
            };
            if (rep == null) {
                if (out != null) out.append(c);
            } else {
                if (out == null) out = new StringBuilder(s.length() + 16).append(s, 0, i);
                out.append(rep);
            }
        }
        return out == null ? s : out.toString();
    }

    /** The plain variant: the same HTML as page.jsp and page.ftlh, appended to a StringBuilder (the ceiling). */
    public String renderPlain() {
        StringBuilder b = new StringBuilder(256 + 96 * items.size());
        String t = escape(title);
        b.append("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>").append(t).append("</title>\n</head>\n<body>\n<h1>")
                .append(t).append("</h1>\n<ul>\n");
        for (Item item : items)
            b.append("<li id=\"item-").append(item.id).append("\">").append(escape(item.name)).append(" <span class=\"price\">")
                    .append(escape(item.price)).append("</span></li>\n");
        b.append("</ul>\n</body>\n</html>\n");
        return b.toString();
    }
}
