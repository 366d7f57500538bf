function event() end
