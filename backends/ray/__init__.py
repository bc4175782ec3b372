"""Ray: the tasks and actors of a cluster that wait for a debugger.

A `breakpoint()` in a `@ray.remote` task or actor (Ray 2.39+, `RAY_DEBUG=1`,
the default), or an exception with `RAY_DEBUG_POST_MORTEM=1`, makes Ray's
worker open a debugpy server on its node (`ray.util.debugpy`: `debugpy.listen`
on the node's address, port 0), record the port on the worker, count the thread
as paused, and wait for a client. Ray's State API publishes both: a worker's
`debugger_port` and `num_paused_threads`, a task's `is_debugger_paused`. We read
them from the cluster's dashboard over HTTP (no Ray import here: Ray is the
user's, and the dashboard is what Ray's own VS Code front end reads), and attach
to each worker's debugpy as to any debugpy server.
"""

from .discover import PausedTask, dashboard_url, list_paused

__all__ = ["PausedTask", "dashboard_url", "list_paused"]
