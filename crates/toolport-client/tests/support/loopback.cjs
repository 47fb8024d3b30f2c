// Preloaded into the conformance suite (NODE_OPTIONS=--require): its mock
// servers call listen(port) without a host, which binds every interface.
// This binds them to 127.0.0.1 instead, so nothing is reachable from
// outside. It hooks the step after the address is chosen, so listen() stays
// synchronous (the scenarios read server.address() right after it).
'use strict';
const net = require('net');
const setup = net.Server.prototype._listen2;
net.Server.prototype._listen2 = function (address, port, addressType, ...rest) {
  if (address === null || address === undefined || address === '::' || address === '0.0.0.0') {
    return setup.call(this, '127.0.0.1', port, 4, ...rest);
  }
  return setup.call(this, address, port, addressType, ...rest);
};
