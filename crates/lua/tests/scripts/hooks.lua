-- Report hooks; which printer is used comes from --mode.
sysbench.cmdline.options = {
  mode = {"custom, csv, json or default", "custom"},
}

local ffi = require("ffi")
ffi.cdef[[int usleep(unsigned int usec);]]

function event()
  ffi.C.usleep(1000)
end

local mode = sysbench.opt.mode
if mode == "custom" then
  sysbench.hooks.report_intermediate = function(stat)
    print(string.format("HOOK time=%.2f events=%d threads=%d lat=%.6f reads=%d",
      stat.time_total, stat.events, stat.threads_running, stat.latency_pct, stat.reads))
  end
  sysbench.hooks.report_cumulative = function(stat)
    print(string.format("FINAL events=%d min=%.6f max=%.6f avg=%.6f sum=%.6f",
      stat.events, stat.latency_min, stat.latency_max, stat.latency_avg, stat.latency_sum))
  end
elseif mode == "csv" then
  sysbench.hooks.report_intermediate = sysbench.report_csv
elseif mode == "json" then
  sysbench.hooks.report_intermediate = sysbench.report_json
elseif mode == "default" then
  sysbench.hooks.report_intermediate = sysbench.report_default
end
