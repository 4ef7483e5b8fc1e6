"""The notebook launch form's profile picker: a first choice that fills the fields.

:class:`~jupyter_cluster.widgets.LaunchForm` puts it on top when ``GET
launch-options`` lists profiles (:func:`jupyter_cluster.core.profiles.listing`):
choosing one sets the form's fields to the profile's (the rest keep the form's
defaults), and keeps those it has no field for (``name``, ``apps``, ``retries``) in
``form.carried`` for the launch; a profile the user's limits cannot
launch is listed as unavailable and, if chosen, shows the reason and fills nothing.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

#: Launch field -> the form's widget attribute, when they differ.
_WIDGET = {"resource_group": "group", "max_lifetime": "lifetime"}


def label(profile: dict[str, Any]) -> str:
    """How the picker lists ``profile``."""
    text = profile["name"] + (f": {profile['description']}" if profile["description"] else "")
    return f"{text} (unavailable)" if profile.get("disabled") else text


def picker(form: Any, profiles: list[dict[str, Any]], style: dict[str, str]) -> w.Widget:
    """A dropdown of ``profiles`` that fills ``form``'s fields when one is chosen."""
    by_name = {p["name"]: p for p in profiles}
    choices = [("(none: the fields below)", "")] + [(label(p), p["name"]) for p in profiles]
    dropdown = w.Dropdown(options=choices, value="", description="Profile", style=style)

    def chosen(change: dict[str, Any]) -> None:
        profile = by_name.get(change["new"])
        if profile is None:  # none: nothing of the last profile is launched
            form.carried = {}
            return
        if profile.get("disabled"):  # fills nothing, as the Lab dialog
            form.error.value = f"profile {profile['name']} cannot launch: {profile['reason']}"
            form.launch_button.disabled = True
            return
        fill(form, profile["fields"])

    dropdown.observe(chosen, names="value")
    return dropdown


def fill(form: Any, fields: dict[str, Any]) -> None:
    """Set ``form``'s widgets to the launch ``fields`` (REST-shaped values); those it
    has no widget for replace ``form.carried`` (a profile's apps were dropped)."""
    form.carried = {}
    for name, value in fields.items():
        widget = getattr(form, _WIDGET.get(name, name), None)
        if widget is None or not hasattr(widget, "value"):
            if name != "start_kernel":  # the notebook form starts no kernel
                form.carried[name] = value
            continue
        if name == "env":
            widget.value = "".join(f"{k}={v}\n" for k, v in (value or {}).items())
        elif name == "mounts":
            widget.value = tuple(value or ())
        elif value is None:
            widget.value = ""
        else:
            widget.value = type(widget.value)(value)
