"""The pieces the code chunker builds before they become chunks: groups of children, runs of groups."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chunklab.chunkers.structural.code.names import Definition

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["Group", "Piece"]


class Group:
    """Consecutive children of one node that stay together: doc comments, the node, trailing tokens."""

    __slots__ = ("s", "e", "owner", "docs")

    def __init__(self, s: int, owner: Node | None) -> None:
        self.s = s
        self.e = s
        self.owner = owner  # the first child that is not a comment or attribute (None: comments only)
        self.docs: list[Node] = []


class Piece:
    """A run of groups on its way to a chunk; ``inside`` the definitions it lies within."""

    __slots__ = ("s", "e", "groups", "inside", "oversize", "partial", "head_docs")

    def __init__(self, s: int, e: int, groups: list[Group], inside: list[Definition], partial: bool) -> None:
        self.s, self.e, self.groups, self.inside = s, e, groups, inside
        self.oversize = False
        self.partial = partial
        self.head_docs: list[Node] | None = None  # set on the first piece of a definition split up
