// Times in the viewer's own zone and language: each <time datetime> the server wrote (in the zone the
// time was recorded in) is shown as this browser's locale shows a date and time; the written form stays
// as the element's title. Nothing else; the pages work without it.
document.querySelectorAll("time[datetime]").forEach(function (el) {
  var at = new Date(el.getAttribute("datetime"));
  if (isNaN(at)) return;
  el.title = el.textContent;
  el.textContent = at.toLocaleString(document.documentElement.lang || undefined,
                                     { dateStyle: "medium", timeStyle: "short" });
});
