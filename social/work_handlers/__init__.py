"""Job handlers of the worker tier (social/work/): one module per queue's kind of work,
each listed in social/work/registry.py's HANDLER_MODULES."""
