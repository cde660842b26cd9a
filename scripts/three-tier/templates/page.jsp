<%-- The templates round's page: the same HTML as page.ftlh and PageModel.renderPlain. Scriptlets, no taglib (as the
     original's JSP); no session, so the response carries no cookie and matches the other engines' headers. --%>
<%@ page contentType="text/html; charset=UTF-8" session="false" import="perfkit.threetier.templates.PageModel" %>
<% PageModel model = (PageModel) request.getAttribute("model"); %>
<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title><%= PageModel.escape(model.getTitle()) %></title>
</head>
<body>
<h1><%= PageModel.escape(model.getTitle()) %></h1>
<ul>
<% for (PageModel.Item item : model.getItems()) { %>
<li id="item-<%= item.getId() %>"><%= PageModel.escape(item.getName()) %> <span class="price"><%= PageModel.escape(item.getPrice()) %></span></li>
<% } %>
</ul>
</body>
</html>
