return { name = "nearby" }
