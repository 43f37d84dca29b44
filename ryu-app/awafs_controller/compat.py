"""The one place that knows which controller framework is installed.

os-ken (OpenStack's maintained fork of Ryu) keeps Ryu's API under
'os_ken.*'; Ryu itself still runs on older Pythons.  The app imports the
framework's modules from here only, so it loads under either."""

import importlib
from types import SimpleNamespace

FRAMEWORKS = ("os_ken", "ryu")

# What the app uses, as attribute name -> module path under the framework.
MODULES = {
    "app_manager": "base.app_manager",
    "cfg": "cfg",
    "handler": "controller.handler",
    "hub": "lib.hub",
    "ofp_event": "controller.ofp_event",
    "ofproto_v1_3": "ofproto.ofproto_v1_3",
}

# The app base class: os-ken renamed Ryu's RyuApp.
APP_CLASSES = ("OSKenApp", "RyuApp")


def load(frameworks=FRAMEWORKS, import_module=importlib.import_module):
    """The first of 'frameworks' whose modules all import, as a namespace
    of those modules plus 'name' (the framework) and 'App' (its base app
    class)."""
    failures = []
    for name in frameworks:
        try:
            modules = {attr: import_module(f"{name}.{path}")
                       for attr, path in MODULES.items()}
        except ImportError as e:
            failures.append(f"{name}: {e}")
            continue
        app_class = next((getattr(modules["app_manager"], c)
                          for c in APP_CLASSES
                          if hasattr(modules["app_manager"], c)), None)
        if app_class is None:
            failures.append(f"{name}: no app class ({', '.join(APP_CLASSES)})"
                            " in its app_manager")
            continue
        return SimpleNamespace(name=name, App=app_class, **modules)
    raise ImportError("no controller framework imports: "
                      + "; ".join(failures))
