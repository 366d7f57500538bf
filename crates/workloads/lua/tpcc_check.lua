-- tpcc_check: the consistency checks of bmk's built-in TPC-C-like workload (numbered
-- as in the TPC-C specification's consistency conditions: 1-5, 7-10, 12;
-- docs/workloads-tpcc-dbstress.md).
--
-- Every check is one query per (warehouse, table set) returning the number of
-- offending rows (districts, orders, lines, customers); 0 = PASSED. Money sums are
-- compared with a 0.005 tolerance (SQLite stores DECIMAL as floating point). The
-- per-customer check 10 uses grouped joins instead of correlated sub-queries so it
-- stays fast without the history index (--use-fk=2).

require("tpcc_common")
local ws = require("bmk_workload_support")

local fmt = string.format

local function delivered_lines(n, w)
  return fmt("SELECT o.o_d_id dd, o.o_c_id cc, sum(ol.ol_amount) s FROM orders%d o, "
    .. "order_line%d ol WHERE o.o_w_id = %d AND ol.ol_w_id = o.o_w_id AND "
    .. "ol.ol_d_id = o.o_d_id AND ol.ol_o_id = o.o_id AND %s GROUP BY o.o_d_id, o.o_c_id",
    n, n, w, delivered_date("ol.ol_delivery_d"))
end

-- { number, description, function(n, w) -> SQL returning the offending count }
TPCC_CHECKS = {
  { 1, "w_ytd = sum(d_ytd)", function(n, w)
    return fmt("SELECT count(*) FROM (SELECT d_w_id, sum(d_ytd) - max(w_ytd) diff FROM "
      .. "district%d, warehouse%d WHERE d_w_id = w_id AND w_id = %d GROUP BY d_w_id) t "
      .. "WHERE abs(diff) > 0.005", n, n, w)
  end },
  { 2, "d_next_o_id - 1 = max(o_id) = max(no_o_id)", function(n, w)
    return fmt("SELECT count(*) FROM district%d d LEFT JOIN (SELECT o_d_id, max(o_id) mo "
      .. "FROM orders%d WHERE o_w_id = %d GROUP BY o_d_id) o ON o.o_d_id = d.d_id "
      .. "LEFT JOIN (SELECT no_d_id, max(no_o_id) mno FROM new_orders%d WHERE no_w_id = %d "
      .. "GROUP BY no_d_id) nw ON nw.no_d_id = d.d_id WHERE d.d_w_id = %d AND "
      .. "(o.mo IS NULL OR d.d_next_o_id - 1 <> o.mo OR "
      .. "(nw.mno IS NOT NULL AND nw.mno <> o.mo))", n, n, w, n, w, w)
  end },
  { 3, "new_orders ids contiguous per district", function(n, w)
    return fmt("SELECT count(*) FROM (SELECT no_d_id, max(no_o_id) - min(no_o_id) + 1 - "
      .. "count(*) diff FROM new_orders%d WHERE no_w_id = %d GROUP BY no_d_id) t WHERE "
      .. "diff <> 0", n, w)
  end },
  { 4, "sum(o_ol_cnt) = order_line rows per district", function(n, w)
    return fmt("SELECT count(*) FROM (SELECT o_d_id, sum(o_ol_cnt) s FROM orders%d WHERE "
      .. "o_w_id = %d GROUP BY o_d_id) o LEFT JOIN (SELECT ol_d_id, count(*) c FROM "
      .. "order_line%d WHERE ol_w_id = %d GROUP BY ol_d_id) l ON l.ol_d_id = o.o_d_id "
      .. "WHERE l.c IS NULL OR o.s <> l.c", n, w, n, w)
  end },
  { 5, "order undelivered iff it has a new_orders row", function(n, w)
    return fmt("SELECT count(*) FROM orders%d o LEFT JOIN new_orders%d nw ON "
      .. "nw.no_w_id = o.o_w_id AND nw.no_d_id = o.o_d_id AND nw.no_o_id = o.o_id WHERE "
      .. "o.o_w_id = %d AND ((%s AND nw.no_o_id IS NULL) OR (%s AND nw.no_o_id IS NOT "
      .. "NULL))", n, n, w, undelivered_carrier("o.o_carrier_id"),
      delivered_carrier("o.o_carrier_id"))
  end },
  { 7, "ol_delivery_d set iff o_carrier_id set", function(n, w)
    return fmt("SELECT count(*) FROM orders%d o, order_line%d ol WHERE o.o_w_id = %d AND "
      .. "ol.ol_w_id = o.o_w_id AND ol.ol_d_id = o.o_d_id AND ol.ol_o_id = o.o_id AND "
      .. "((%s AND %s) OR (%s AND %s))", n, n, w, undelivered_date("ol.ol_delivery_d"),
      delivered_carrier("o.o_carrier_id"), delivered_date("ol.ol_delivery_d"),
      undelivered_carrier("o.o_carrier_id"))
  end },
  { 8, "w_ytd = sum(h_amount) of the warehouse", function(n, w)
    return fmt("SELECT count(*) FROM warehouse%d WHERE w_id = %d AND abs(w_ytd - "
      .. "COALESCE((SELECT sum(h_amount) FROM history%d WHERE h_w_id = %d), 0)) > 0.005",
      n, w, n, w)
  end },
  { 9, "d_ytd = sum(h_amount) of the district", function(n, w)
    return fmt("SELECT count(*) FROM district%d d LEFT JOIN (SELECT h_d_id, "
      .. "sum(h_amount) s FROM history%d WHERE h_w_id = %d GROUP BY h_d_id) h ON "
      .. "h.h_d_id = d.d_id WHERE d.d_w_id = %d AND abs(d.d_ytd - COALESCE(h.s, 0)) > "
      .. "0.005", n, n, w, w)
  end },
  { 10, "c_balance = delivered sum(ol_amount) - sum(h_amount)", function(n, w)
    return fmt("SELECT count(*) FROM customer%d c LEFT JOIN (%s) a ON a.dd = c.c_d_id AND "
      .. "a.cc = c.c_id LEFT JOIN (SELECT h_c_d_id hd, h_c_id hc, sum(h_amount) s FROM "
      .. "history%d WHERE h_c_w_id = %d GROUP BY h_c_d_id, h_c_id) h ON h.hd = c.c_d_id "
      .. "AND h.hc = c.c_id WHERE c.c_w_id = %d AND abs(c.c_balance - (COALESCE(a.s, 0) - "
      .. "COALESCE(h.s, 0))) > 0.005", n, delivered_lines(n, w), n, w, w)
  end },
  { 12, "c_balance + c_ytd_payment = delivered sum(ol_amount)", function(n, w)
    return fmt("SELECT count(*) FROM customer%d c LEFT JOIN (%s) a ON a.dd = c.c_d_id AND "
      .. "a.cc = c.c_id WHERE c.c_w_id = %d AND abs(c.c_balance + c.c_ytd_payment - "
      .. "COALESCE(a.s, 0)) > 0.005", n, delivered_lines(n, w), w)
  end },
}

-- check (PARALLEL_COMMAND): worker tid checks warehouses tid+1, tid+1+threads, ... of
-- every table set; raises an error (exit 1) when any check failed.
function cmd_check()
  tpcc_check_options()
  use_null = ws.opt_num("force_null") == 1
  tpcc_connect()
  local failed, passed = 0, 0
  local P = sysbench.opt.threads
  for w = sysbench.tid + 1, ws.opt_num("scale"), P do
    for n = 1, ws.opt_num("tables") do
      for _, c in ipairs(TPCC_CHECKS) do
        local bad = tonumber(con:query_row(c[3](n, w))) or 0
        if bad == 0 then
          passed = passed + 1
          print(fmt("Check %d (%s), warehouse %d, table set %d: PASSED", c[1], c[2], w, n))
        else
          failed = failed + 1
          print(fmt("Check %d (%s), warehouse %d, table set %d: FAILED!!! (%d offending)",
            c[1], c[2], w, n, bad))
        end
      end
    end
  end
  con:disconnect()
  if failed > 0 then
    error(fmt("tpcc check: %d check(s) FAILED, %d passed", failed, passed), 0)
  end
end
