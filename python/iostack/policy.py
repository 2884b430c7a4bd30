"""Replacement policies written in Python: subclass :class:`Policy` and pass the class where a
policy name goes (``iostack.simulate(trace, policy=MyLRU, ...)``, ``iostack.run(trace,
policy=MyLRU, ...)``).

iostack builds one instance per run (``MyLRU(capacity)``) and drives it from the Rust engines
with the same operations a built-in policy has. It keeps the books itself: which keys the
instance holds and their sizes, so the cache never exceeds its capacity (iostack calls ``evict``
until the new entry fits, then ``insert``), and it checks every answer against the contract. A
breach (``find`` reporting a hit on a key the policy does not hold or a miss on one it does,
``evict`` returning a key it does not hold, ``None``, or something that is not a key) stops the
run with a ``ValueError`` naming the class, the reference and the breach; an exception raised by
the policy's own code propagates unchanged. No result is returned from a run that broke the
contract.
"""

from __future__ import annotations

from iostack._core import Access

__all__ = ["Policy", "Access"]


class Policy:
    """Base class of replacement policies written in Python.

    ``capacity`` is in the cache's unit: objects (``unit_size=True``), bytes (sized object
    mode, where ``access.size`` is the request's length) or blocks (block mode, the timed stack).

    Each method receives an :class:`iostack.Access` with the fields a Rust policy sees:
    ``key``, ``size``, ``pid``, ``op`` (``'R'``/``'W'``), ``time_ns``, ``vtime`` (position in the
    reference stream), ``origin`` (``'demand'`` or ``'prefetch'``) and ``next_access`` (the
    position of the next reference to ``key``, only for a class that sets ``needs_future =
    True``, in ``simulate``; None otherwise).

    Subclasses implement:

    - ``find(access) -> bool``: whether ``access.key`` is cached (a hit); update recency or
      frequency on a hit. Return ``False`` exactly for keys not held.
    - ``insert(access)``: cache ``access.key``; called only for a key not held, once there is
      room for ``access.size``.
    - ``evict(access) -> key``: choose a victim among the held keys, forget it and return its
      key. ``access`` is the reference that needs the room.
    - optionally ``remove(key)``: forget ``key`` (only called for a held key).

    Results are named after the class, or its ``name`` class attribute when it has one.
    """

    #: Set to True to receive ``access.next_access`` (e.g. to write Belady's OPT).
    needs_future = False

    def __init__(self, capacity: int):
        self.capacity = capacity

    def find(self, access: Access) -> bool:
        raise NotImplementedError(f"{type(self).__name__}.find(access) is not implemented")

    def insert(self, access: Access) -> None:
        raise NotImplementedError(f"{type(self).__name__}.insert(access) is not implemented")

    def evict(self, access: Access) -> int:
        raise NotImplementedError(f"{type(self).__name__}.evict(access) is not implemented")


def policy_name(cls: type) -> str:
    """The name results give a policy class: its ``name`` attribute if a string, else the class name."""
    name = getattr(cls, "name", None)
    return name if isinstance(name, str) else cls.__name__


def is_policy_class(p) -> bool:
    """Whether ``p`` is a Policy subclass (the class itself, not an instance)."""
    return isinstance(p, type) and issubclass(p, Policy)


def check_policy_arg(p) -> None:
    """Raises a clear error for something given as a policy that is neither a name nor a class."""
    if isinstance(p, str) or is_policy_class(p):
        return
    if isinstance(p, Policy):
        raise ValueError(
            f"policy: pass the class {type(p).__name__}, not an instance: iostack builds one instance per run, "
            "with that run's capacity"
        )
    if isinstance(p, type):
        raise ValueError(f"policy: class {p.__name__} is not a subclass of iostack.Policy")
    raise ValueError(f"policy: {p!r} is neither a policy name (see iostack.policies()) nor an iostack.Policy subclass")
