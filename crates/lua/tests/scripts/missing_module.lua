require("no_such_module_anywhere")
