// New campaign: propose the slug from the name until the researcher types a slug of their own.
(function () {
  "use strict";
  var name = document.getElementById("id_name");
  var slug = document.getElementById("id_slug");
  if (!name || !slug || slug.value) { return; }
  var typed = false;
  function slugify(text) {
    return text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 80).replace(/-+$/, "");
  }
  slug.addEventListener("input", function () { typed = slug.value !== ""; });
  name.addEventListener("input", function () { if (!typed) { slug.value = slugify(name.value); } });
})();
