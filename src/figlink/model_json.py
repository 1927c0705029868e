"""JSON for the data model, derived from its dataclasses: a field added to a record is serialized,
read back and given a Parquet column without any other change.

A record's JSON object has one key per dataclass field, in declaration order: ``str``/``int``/``float``/
``bool``/``None`` and ``Literal`` values as they are, lists item by item, nested records as objects.
Fields with ``init=False`` (a paper's ``schema_version``) are written and not read: they always hold the
current value. Two kinds of key are declared by the classes themselves:

- a *flat* value (:class:`FlatValue`, such as a box) spreads over several keys of the record that holds it:
  the field ``bbox`` is written ``"bbox": [x0, y0, x1, y1], "bbox_space": "image_pixels"``;
- a record may add *derived* keys (:class:`Derived`), computed from it and the record holding it (a
  panel's ``subcaption`` text, from its indices into the figure's caption split); they are written for
  readers of the JSON and ignored when it is read back.

:func:`json_fields` gives the same keys with their types, which the Parquet export maps to Arrow.
``Literal`` fields are checked when read: a value outside the literal is an error, not a silent string.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import lru_cache
from typing import Any, Callable, ClassVar, Literal, Mapping, Optional, Protocol, TypeVar, Union

T = TypeVar("T")
Encoder = Callable[[Any, Any], Any]  # (value, holder) -> JSON value
Decoder = Callable[[Any], Any]  # JSON value -> value
_WRITE_PLANS: dict[type, tuple[tuple[int, str, Any], ...]] = {}  # per record class, made on first use
_READ_PLANS: dict[type, tuple[tuple[str, Any, Optional[Decoder]], ...]] = {}


@dataclasses.dataclass(frozen=True)
class Derived:
    """A key written after the field ``after`` whose value is ``value(record, holder)``; never read back
    (one per field)."""

    key: str
    type: Any
    after: str
    value: Callable[[Any, Any], Any]


class FlatValue(Protocol):
    """A value written as several keys of its holder, named after the field that holds it."""

    @classmethod
    def json_keys(cls, name: str) -> list[tuple[str, Any]]:
        """The keys (and their types) that a field called ``name`` is written as."""
        ...

    def json_items(self, name: str) -> dict[str, Any]:
        """This value's keys and JSON values."""
        ...

    @classmethod
    def from_json_items(cls, d: Mapping[str, Any], name: str) -> Any:
        """The value read from its keys in ``d`` (None when its main key is null)."""
        ...


def _is_flat(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "json_keys") and hasattr(tp, "from_json_items")


def _optional(tp: Any) -> Optional[Any]:
    """``X`` of ``Optional[X]``, else None."""
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return args[0]
    return None


def _derived(cls: type) -> tuple[Derived, ...]:
    return tuple(getattr(cls, "json_derived", ()))


@lru_cache(maxsize=None)
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


# --------------------------------------------------------------------------------------------- writing

def _encoder(tp: Any) -> Optional[Encoder]:
    """How a value of type ``tp`` becomes JSON; None when it is JSON as it is."""
    inner = _optional(tp)
    if inner is not None:
        some = _encoder(inner)
        return None if some is None else lambda v, h: None if v is None else some(v, h)
    if typing.get_origin(tp) is list:
        (item,) = typing.get_args(tp)
        if dataclasses.is_dataclass(item):
            return lambda v, h: [to_json_dict(x, h) for x in v]
        each = _encoder(item)
        if each is None:
            return lambda v, h: list(v)
        return lambda v, h: [each(x, h) for x in v]
    if dataclasses.is_dataclass(tp):
        return to_json_dict
    return None


_AS_IS, _VALUE, _FLAT, _DERIVED = 0, 1, 2, 3


def _write_plan(cls: Any) -> tuple[tuple[int, str, Any], ...]:
    """(kind, field name or derived key, encoder / flat class / derived function) for every key."""
    plan = _WRITE_PLANS.get(cls)
    if plan is None:
        plan = _WRITE_PLANS[cls] = _make_write_plan(cls)
    return plan


def _make_write_plan(cls: Any) -> tuple[tuple[int, str, Any], ...]:
    hints = _hints(cls)
    derived = {d.after: d for d in _derived(cls)}
    plan: list[tuple[int, str, Any]] = []
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        flat = _optional(tp) or tp
        if _is_flat(flat):
            plan.append((_FLAT, f.name, flat))
        else:
            enc = _encoder(tp)
            plan.append((_AS_IS, f.name, None) if enc is None else (_VALUE, f.name, enc))
        if f.name in derived:
            plan.append((_DERIVED, derived[f.name].key, derived[f.name].value))
    return tuple(plan)


def to_json_dict(obj: Any, holder: Any = None) -> dict[str, Any]:
    """The JSON object of a record; ``holder`` is the record it belongs to (for derived keys)."""
    out: dict[str, Any] = {}
    for kind, name, how in _write_plan(type(obj)):
        if kind == _AS_IS:
            out[name] = getattr(obj, name)
        elif kind == _VALUE:
            out[name] = how(getattr(obj, name), obj)
        elif kind == _FLAT:
            value = getattr(obj, name)
            out.update(dict.fromkeys((k for k, _ in how.json_keys(name))) if value is None
                       else value.json_items(name))
        else:
            out[name] = how(obj, holder)
    return out


# --------------------------------------------------------------------------------------------- reading

def _literal_check(tp: Any) -> Decoder:
    allowed = frozenset(typing.get_args(tp))

    def check(v: Any) -> Any:
        if v not in allowed:
            raise ValueError(f"{v!r} is not one of {sorted(map(str, allowed))}")
        return v

    return check


def _decoder(tp: Any) -> Optional[Decoder]:
    """How a JSON value becomes a value of type ``tp``; None when it is used as it is."""
    inner = _optional(tp)
    if inner is not None:
        some = _decoder(inner)
        return None if some is None else lambda v: None if v is None else some(v)
    origin = typing.get_origin(tp)
    if origin is list:
        (item,) = typing.get_args(tp)
        each = _decoder(item)
        if each is None:
            return list
        return lambda v: [each(x) for x in v]
    if origin is Literal:
        return _literal_check(tp)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return lambda v: from_json_dict(tp, v)
    return None


def _read_plan(cls: Any) -> tuple[tuple[str, Any, Optional[Decoder]], ...]:
    """(field name, flat class or None, decoder) for every field read from JSON."""
    plan = _READ_PLANS.get(cls)
    if plan is None:
        plan = _READ_PLANS[cls] = _make_read_plan(cls)
    return plan


def _make_read_plan(cls: Any) -> tuple[tuple[str, Any, Optional[Decoder]], ...]:
    hints = _hints(cls)
    plan: list[tuple[str, Any, Optional[Decoder]]] = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        tp = hints[f.name]
        flat = _optional(tp) or tp
        plan.append((f.name, flat, None) if _is_flat(flat) else (f.name, None, _decoder(tp)))
    return tuple(plan)


def from_json_dict(cls: type[T], d: Mapping[str, Any]) -> T:
    """The record of class ``cls`` read from its JSON object (keys it does not know are ignored; a missing
    key takes the field's default)."""
    kwargs: dict[str, Any] = {}
    for name, flat, dec in _read_plan(cls):
        if flat is not None:
            if name in d:
                kwargs[name] = flat.from_json_items(d, name)
        elif name in d:
            if dec is None:
                kwargs[name] = d[name]
                continue
            try:
                kwargs[name] = dec(d[name])
            except ValueError as e:
                raise ValueError(f"{cls.__name__}.{name}: {e}") from None
    return cls(**kwargs)


# --------------------------------------------------------------------------------------------- schema

def json_fields(cls: Any, leave_out: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    """The keys of a record's JSON object, in order, with their types (flat values spread, derived keys
    included); nested records are left as their class (the caller recurses)."""
    hints = _hints(cls)
    derived = {d.after: d for d in _derived(cls)}
    out: list[tuple[str, Any]] = []
    for f in dataclasses.fields(cls):
        if f.name in leave_out:
            continue
        tp = hints[f.name]
        flat = _optional(tp) or tp
        out.extend(flat.json_keys(f.name) if _is_flat(flat) else [(f.name, tp)])
        if f.name in derived:
            out.append((derived[f.name].key, derived[f.name].type))
    return out


class JsonRecord:
    """Base of the model's records: ``to_dict``/``from_dict`` through the derived serialization."""

    json_derived: ClassVar[tuple[Derived, ...]] = ()

    def to_dict(self, holder: Any = None) -> dict[str, Any]:
        return to_json_dict(self, holder)

    @classmethod
    def from_dict(cls: type[T], d: Mapping[str, Any]) -> T:
        return from_json_dict(cls, d)


__all__ = ["Derived", "FlatValue", "JsonRecord", "from_json_dict", "json_fields", "to_json_dict"]
