-- A user histogram object.
sysbench.cmdline.commands = {
  hist = {function()
    local h = sysbench.histogram.new(100, 1, 1000)
    for _ = 1, 30 do h:update(10) end
    for _ = 1, 10 do h:update(500) end
    h:update(2000)
    h:print()
  end},
}
