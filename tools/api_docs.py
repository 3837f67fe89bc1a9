"""Ember's API reference: generate one reStructuredText page per public module, build it with
Sphinx (autodoc + napoleon), warnings as errors.

Input: Ember's public modules (the Ember counterpart of every JAX module listed in
ember/_jax_names.py that Ember has, the `ember.scipy.stats` distributions, and the stage
objects of `ember.jit`), their `__all__` (or their `dir()` where a module has none), and
JAX 0.10.2's names for each module (ember/_jax_names.py).
Output: `pages()` maps each file name (`ember.numpy.rst`, `index.rst`, ...) to its text:
every public name of the module with its signature and docstring (autodoc), each
constant with its value, each submodule linked to its page, and, last, the JAX names the
module does not have yet ("not implemented yet"); JAX modules Ember has no counterpart of
are listed on the index page. `python tools/api_docs.py` writes the pages to
docs/_build/api-src and builds the HTML into docs/_build/html (Sphinx's configuration is
docs/api/conf.py); `--builder dummy` checks the build without writing HTML.
Invariants: the pages are made from the installed package at each build, never committed,
so they cannot fall behind the code; a name appears once per page; only objects Ember
defines go through autodoc (a re-exported NumPy type gets one line naming where it comes
from), so the build's warnings are Ember's docstrings' own.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pathlib
import shutil
import sys
import types
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONF_DIR = ROOT / "docs" / "api"
BUILD_DIR = ROOT / "docs" / "_build"

# Modules that have a page beyond the JAX list's counterparts: `jax.lax.linalg`,
# `jax.checkpoint_policies`, the distributions of ember.scipy.stats (JAX's are
# submodules of jax.scipy.stats too), `jax.ad_checkpoint` and `jax.distributed`.
EXTRA_MODULES = ("ember.lax.linalg", "ember.checkpoint_policies", "ember.scipy.stats.norm",
                 "ember.scipy.stats.uniform", "ember.scipy.stats.bernoulli",
                 "ember.scipy.stats.gamma", "ember.scipy.stats.beta",
                 "ember.scipy.stats.poisson", "ember.scipy.stats.chi2",
                 "ember.ad_checkpoint", "ember.distributed")

# The classes `ember.jit` and its stages return (JAX keeps them in jax.stages).
STAGE_CLASSES = ("JitFunction", "Traced", "Lowered", "Compiled")
STAGES_MODULE = "ember.api"


@dataclass
class ModuleDoc:
    """One public module's page: its names, split by how each is documented."""

    name: str
    module: types.ModuleType
    jax_name: str | None
    submodules: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    foreign: list[tuple[str, str]] = field(default_factory=list)  # (name, where from)
    data: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def documented(self) -> list[str]:
        """Every name the page documents (not counting the "not implemented yet" list)."""
        return (self.submodules + self.classes + self.functions
                + [n for n, _ in self.foreign] + self.data)


def _jax_names() -> dict[str, tuple[str, ...]]:
    from ember._jax_names import NAMES
    return NAMES


def ember_name(jax_module: str) -> str:
    """`jax.numpy.linalg` -> `ember.numpy.linalg`."""
    return "ember" + jax_module[len("jax"):]


def module_names() -> list[str]:
    """The public Ember modules that get a page, in the index's order."""
    names = []
    for jax_module in _jax_names():
        name = ember_name(jax_module)
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        names.append(name)
    return names + [m for m in EXTRA_MODULES if m not in names]


def absent_jax_modules() -> list[str]:
    """JAX modules in the list whose Ember counterpart does not exist yet."""
    out = []
    for jax_module in _jax_names():
        try:
            importlib.import_module(ember_name(jax_module))
        except ImportError:
            out.append(jax_module)
    return out


def _owner(obj: object) -> str:
    module = getattr(obj, "__module__", None)
    return module if isinstance(module, str) else type(obj).__module__


def is_embers(obj: object) -> bool:
    """True when Ember defines the object (its module, or its class's, is under ember)."""
    owner = _owner(obj)
    return owner == "ember" or owner.startswith("ember.")


def public_names(module: types.ModuleType) -> list[str]:
    """The module's public names: its `__all__` (or, without one, the `dir()` names not
    starting with `_` that are not typing helpers or imported modules), plus JAX's names for
    that module which it has, sorted."""
    jax_names = _jax_names().get("jax" + module.__name__[len("ember"):], ())
    if "__all__" in vars(module):
        names = set(module.__all__)
    else:
        names = set()
        for name in dir(module):
            if name.startswith("_"):
                continue
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType) and not obj.__name__.startswith(
                    module.__name__ + "."):
                continue  # an imported helper module (np, lax...), not a submodule
            if _owner(obj) in ("typing", "__future__", "ember._missing"):
                continue
            names.add(name)
    names |= {n for n in jax_names if hasattr(module, n)}
    return sorted(names)


def describe_module(name: str) -> ModuleDoc:
    """Split the public names of module `name` by kind, and list JAX's names it lacks."""
    module = importlib.import_module(name)
    jax_name = "jax" + name[len("ember"):]
    jax_names = _jax_names().get(jax_name)
    doc = ModuleDoc(name, module, jax_name if jax_names is not None else None)
    for attr in public_names(module):
        obj = getattr(module, attr)
        if isinstance(obj, types.ModuleType):
            doc.submodules.append(attr)
        elif not is_embers(obj) and (callable(obj) or inspect.isclass(obj)):
            where = f"{_owner(obj)}.{getattr(obj, '__qualname__', type(obj).__qualname__)}"
            doc.foreign.append((attr, where))
        elif inspect.isclass(obj):
            doc.classes.append(attr)
        elif callable(obj):
            doc.functions.append(attr)
        else:
            doc.data.append(attr)
    doc.missing = [n for n in (jax_names or ()) if not hasattr(module, n)]
    return doc


def _title(text: str, under: str) -> str:
    return f"{text}\n{under * len(text)}\n"


def _first_line(obj: object) -> str:
    text = inspect.getdoc(obj) or ""
    return text.strip().splitlines()[0] if text.strip() else ""


def _value(obj: object) -> str:
    text = repr(obj).replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


def render_module(doc: ModuleDoc, pages: set[str], seen: set[int]) -> str:
    """The page of one module (`pages`: the module names that have a page, for links;
    `seen`: the ids of the classes earlier pages documented, which this page documents
    without adding them to the index again, as Sphinx indexes a class by its own name)."""
    out = [f".. _{doc.name}:\n", _title(f"``{doc.name}``", "="),
           f".. py:module:: {doc.name}\n"]
    summary = _first_line(doc.module)
    if summary:
        out.append(summary + "\n")
    if doc.jax_name:
        total = len(_jax_names()[doc.jax_name])
        out.append(f"Ember's counterpart of ``{doc.jax_name}``: it has {total - len(doc.missing)}"
                   f" of JAX {_jax_version()}'s {total} public names; the others are listed "
                   "at the end of this page.\n")
    if doc.submodules:
        out.append(_title("Submodules", "-"))
        for attr in doc.submodules:
            full = getattr(doc.module, attr).__name__
            link = f":ref:`{full}`" if full in pages else f"``{full}``"
            out.append(f"- ``{attr}``: {link}")
        out.append("")
    if doc.functions or doc.classes:
        out.append(_title("Functions and classes", "-"))
        for attr in sorted(doc.functions + doc.classes, key=str.lower):
            if attr in doc.classes:
                obj = getattr(doc.module, attr)
                again = "   :no-index:\n" if id(obj) in seen else ""
                seen.add(id(obj))
                out.append(f".. autoclass:: {doc.name}.{attr}\n   :members:\n{again}")
            else:
                out.append(f".. autofunction:: {doc.name}.{attr}\n")
    if doc.foreign:
        out.append(_title("Re-exported", "-"))
        out.append("These names are NumPy's (or Python's) own objects, which this module "
                   "re-exports unchanged.\n")
        for attr, where in doc.foreign:
            out.append(f".. py:data:: {attr}\n\n   ``{where}``, re-exported.\n")
    if doc.data:
        out.append(_title("Constants", "-"))
        for attr in doc.data:
            obj = getattr(doc.module, attr)
            value = _value(obj).replace("`", "'")
            out.append(f".. py:data:: {attr}\n   :value: {value}\n\n"
                       f"   A constant of type ``{type(obj).__name__}``.\n")
    if doc.missing:
        out.append(_title("Not implemented yet", "-"))
        out.append(f"These names of ``{doc.jax_name}`` (JAX {_jax_version()}) are not "
                   f"implemented yet in Ember: looking one up on ``{doc.name}`` raises an "
                   "``AttributeError`` that says so.\n")
        out.append(", ".join(f"``{n}``" for n in doc.missing) + "\n")
    return "\n".join(out)


def render_stages() -> str:
    """The page of the stage objects: what `ember.jit` returns, and `.trace()`, `.lower()`
    and `.compile()` after it."""
    out = [".. _stages:\n", _title("Stage objects", "="),
           f".. py:module:: {STAGES_MODULE}\n",
           "``ember.jit(f)`` returns a ``JitFunction``; its ``trace`` gives a ``Traced``, "
           "whose ``lower`` gives a ``Lowered``, whose ``compile`` gives a ``Compiled`` "
           "(JAX keeps these classes in ``jax.stages``; Ember in ``ember.api``).\n"]
    for name in STAGE_CLASSES:
        out.append(f".. autoclass:: {STAGES_MODULE}.{name}\n   :members:\n")
    return "\n".join(out)


def _jax_version() -> str:
    from ember._jax_names import JAX_VERSION
    return JAX_VERSION


def render_index(modules: list[str]) -> str:
    """The index page: the modules, the stage objects, and JAX's modules Ember lacks."""
    out = [_title("Ember API reference", "="),
           "Ember's public API follows JAX's: each page below is the Ember counterpart of a "
           "JAX module, with every public name's signature and docstring, and the JAX "
           f"{_jax_version()} names it does not implement yet.\n",
           ".. toctree::\n   :maxdepth: 1\n"]
    out += [f"   {m}" for m in modules] + ["   stages", ""]
    absent = absent_jax_modules()
    if absent:
        out.append(_title("Modules not implemented yet", "-"))
        out.append("These JAX modules have no Ember counterpart yet: "
                   + ", ".join(f"``{m}``" for m in absent) + ".\n")
    return "\n".join(out)


def pages() -> dict[str, str]:
    """{file name: reStructuredText} for the whole reference."""
    modules = module_names()
    out = {"index.rst": render_index(modules), "stages.rst": render_stages()}
    seen: set[int] = set()
    for name in modules:
        out[f"{name}.rst"] = render_module(describe_module(name), set(modules), seen)
    return out


def problems(modules: list[str] | None = None) -> list[str]:
    """What keeps the reference from being complete, one line each (empty when nothing
    does): a public name of a module that its page does not document, a JAX name a module
    lacks that its page does not list as not implemented yet, and a function or class of
    Ember's that the page documents without a docstring, or a public method or property of
    such a class (or of a stage class) without one."""
    names = module_names() if modules is None else modules
    out = []
    seen: set[int] = set()
    for name in names:
        doc = describe_module(name)
        text = render_module(doc, set(names), seen)
        for attr in public_names(doc.module):
            if attr not in doc.documented():
                out.append(f"{name}.{attr}: not on its page")
        for attr in doc.functions + doc.classes:
            entry = f":: {name}.{attr}\n"
            if entry not in text:
                out.append(f"{name}.{attr}: not on its page")
            if not (inspect.getdoc(getattr(doc.module, attr)) or "").strip():
                out.append(f"{name}.{attr}: no docstring")
        for attr in doc.classes:
            out += [f"{name}.{attr}.{m}: no docstring"
                    for m in undocumented_members(getattr(doc.module, attr))]
        missing = text.partition("Not implemented yet\n")[2]
        for attr in doc.missing:
            if f"``{attr}``" not in missing:
                out.append(f"{name}.{attr}: not listed as not implemented yet")
    if modules is None:
        stages = importlib.import_module(STAGES_MODULE)
        for cls in STAGE_CLASSES:
            out += [f"{STAGES_MODULE}.{cls}.{m}: no docstring"
                    for m in undocumented_members(getattr(stages, cls))]
    return out


def undocumented_members(cls: type) -> list[str]:
    """The public methods and properties `cls` itself defines that have no docstring (the
    members autodoc's `:members:` lists)."""
    out = []
    for attr, value in vars(cls).items():
        if attr.startswith("_"):
            continue
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if not (isinstance(value, property) or inspect.isfunction(value)):
            continue
        if not (inspect.getdoc(value) or "").strip():
            out.append(attr)
    return out


def write(srcdir: pathlib.Path) -> None:
    """Write the pages to `srcdir` (emptied first, so a removed module leaves no page)."""
    if srcdir.exists():
        shutil.rmtree(srcdir)
    srcdir.mkdir(parents=True)
    for fname, text in pages().items():
        (srcdir / fname).write_text(text)


def build(srcdir: pathlib.Path, outdir: pathlib.Path, builder: str = "html") -> int:
    """Generate the pages into `srcdir` and run Sphinx on them with warnings as errors;
    returns Sphinx's exit status (0: built without a warning)."""
    write(srcdir)
    return run_sphinx(srcdir, outdir, builder)


def run_sphinx(srcdir: pathlib.Path, outdir: pathlib.Path, builder: str = "html") -> int:
    """Run Sphinx on the pages in `srcdir` with docs/api/conf.py, warnings as errors
    (every warning reported, then a nonzero status)."""
    from sphinx.cmd.build import build_main
    return build_main(["-W", "--keep-going", "-q", "-E", "-b", builder,
                       "-c", str(CONF_DIR), str(srcdir), str(outdir)])


def main(argv: list[str] | None = None) -> int:
    """Command line: build the reference (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builder", default="html", help="Sphinx builder (html, dummy...)")
    parser.add_argument("--out", default=str(BUILD_DIR / "html"), help="output directory")
    args = parser.parse_args(argv)
    status = build(BUILD_DIR / "api-src", pathlib.Path(args.out), args.builder)
    if status == 0 and args.builder == "html":
        print(f"API reference: {pathlib.Path(args.out) / 'index.html'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
