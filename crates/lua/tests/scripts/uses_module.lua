-- Loads a module from the built-in library and one from the script's directory.
local lib = require("test_builtin")
local near = require("nearby_module")
sysbench.cmdline.commands = {
  show = {function()
    assert(lib.greeting() == "hello from the library")
    assert(near.name == "nearby")
  end},
}
