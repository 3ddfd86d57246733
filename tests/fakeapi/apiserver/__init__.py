"""The fake kube-apiserver of tests/fakeapi, one module per concern.

Start it through tests/fakeapi/fakeapi.py (the CLI, and `import fakeapi`
from tests); tests/fakeapi/README.md maps each module to what it holds.
Modules import one another in one direction only (no cycles): the pure
pieces (errors, util, crds, resources, present, patches, managed, selector,
store, validation, discovery, tables, tls) below FakeAPI's parts (users'
Tokens, faults, control, objects) and the handler's (verbs, watch), then
handler.py and server.py on top. Names with a leading underscore are
private to the package, not to their module."""
