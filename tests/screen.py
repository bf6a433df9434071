"""What a screen shows after htmx applies the frames a socket sent.

The consumers send view frames made of top-level elements carrying
``hx-swap-oob`` (``static/narrator/app.js`` hands them to htmx's ws extension).
:class:`Screen` applies them the way htmx 2 does, so a test can compare what a
phone shows after a run of partial frames with a fresh full render:

- ``true`` / ``outerHTML``: the element replaces the one with its id;
- ``delete``: the element with its id is removed;
- ``STYLE:SELECTOR`` (``beforeend``, ``afterbegin``, ``beforebegin``,
  ``afterend``, ``innerHTML``): the element's children go there, its own tag
  pair is dropped.

The first frame (a full view) becomes the whole screen. A frame whose target is
missing raises ``AssertionError``: htmx would drop it silently.
"""

from __future__ import annotations

import copy

from bs4 import BeautifulSoup, NavigableString, Tag

OOB = "hx-swap-oob"


def _parse(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


class Screen:
    """The DOM a socket's frames build; ``str(screen)`` is its HTML with every
    ``hx-swap-oob`` attribute removed (htmx drops them too) and without
    whitespace-only text between tags (a moved card leaves its newlines behind;
    the screen shows no difference)."""

    def __init__(self) -> None:
        self.doc: BeautifulSoup | None = None

    def apply(self, html: str) -> None:
        """Apply one view frame (HTML without its stamp)."""
        if self.doc is None:
            self.doc = _parse(html)
            return
        fragment = _parse(html)
        for element in [child for child in fragment.contents if isinstance(child, Tag)]:
            self._swap(element.extract())

    def _swap(self, element: Tag) -> None:
        how = str(element.attrs.pop(OOB, "true"))
        style, _, selector = how.partition(":")
        if style in ("true", "outerHTML", "delete"):
            target = self.doc.find(id=element.get("id"))
            assert target is not None, f"no #{element.get('id')} on screen for {how!r}"
            if style == "delete":
                target.decompose()
            else:
                target.replace_with(element)
            return
        target = self.doc.select_one(selector)
        assert target is not None, f"no {selector} on screen for {how!r}"
        children = [copy.copy(child) for child in element.contents]
        if style == "innerHTML":
            target.clear()
            target.extend(children)
        elif style == "beforeend":
            target.extend(children)
        elif style == "afterbegin":
            for child in reversed(children):
                target.insert(0, child)
        elif style == "beforebegin":
            for child in children:
                target.insert_before(child)
        elif style == "afterend":
            for child in reversed(children):
                target.insert_after(child)
        else:
            raise AssertionError(f"swap style {style!r} not simulated")

    def __str__(self) -> str:
        if self.doc is None:
            return ""
        for tag in self.doc.find_all(attrs={OOB: True}):
            del tag[OOB]
        for text in self.doc.find_all(string=True):
            if type(text) is NavigableString and not text.strip():
                text.extract()
        return str(self.doc)


def rendered(html: str) -> str:
    """``html`` as a :class:`Screen` holding only it prints it (for comparisons)."""
    screen = Screen()
    screen.apply(html)
    return str(screen)
