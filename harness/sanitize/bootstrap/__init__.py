"""The folder ``address-reuse sanitize`` puts first on PYTHONPATH: its ``sitecustomize``
switches the sanitizer on in every Python process the command starts."""
