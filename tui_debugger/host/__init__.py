"""What runs in a host process: the process that holds one live session.

`daemon` is a host's main; `hub` holds its sessions, `server` serves each on its
socket, `wire` is the socket's protocol. `start` starts a host from a client
(its own process) and `early` starts one before the caller has even parsed its
command line. Nothing is imported here: a client that only needs `wire` or
`early` pays for no more.
"""
