// The API page (/docs/api): Swagger UI over the site's OpenAPI description. Its script and style sheet come
// from the installed fastapi-offline package (/static/swagger-ui/), not a CDN; no online validator.
"use strict";
(function () {
  var box = document.getElementById("swagger-ui");
  if (!box || typeof window.SwaggerUIBundle !== "function") return;
  window.ui = window.SwaggerUIBundle({
    url: box.getAttribute("data-openapi-url") || "/openapi.json",
    domNode: box,
    deepLinking: true,
    validatorUrl: null,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    onComplete: function () { box.removeAttribute("data-drawing"); },  // drawn (the browser tests wait for it)
  });
})();
