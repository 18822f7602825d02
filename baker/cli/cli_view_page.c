/* `kiln view`, the page: one HTML file that opens from disk without a network. The data
 * document (cli_view_data.c) sits in a <script type="application/json"> element, the renderer
 * (web/view.js, embedded at build time as kiln__view_js) in a plain <script> after it. */
#include <errno.h>

#include "cli_view.h"

static const char kiln__view_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"generator\" content=\"kiln view\">\n<title>kiln view</title>\n<style>\n"
    "html,body{margin:0;height:100%;background:#1e2227;color:#d7dae0;font:13px/1.35 sans-serif}\n"
    "#kiln-canvas{position:absolute;left:0;top:0;right:300px;bottom:0;width:calc(100% - 300px);height:100%}\n"
    "#kiln-panel{position:absolute;top:0;right:0;bottom:0;width:300px;overflow:auto;background:#262b31;"
    "box-sizing:border-box;padding:8px;border-left:1px solid #3a4049}\n"
    "#kiln-panel h2{font-size:13px;margin:10px 0 4px;color:#9fb4c8}\n"
    "#kiln-panel li{cursor:pointer;list-style:none;padding:1px 2px}#kiln-panel ul{padding:0;margin:0}\n"
    "#kiln-panel li.on{background:#3d5a80}\n#kiln-capped{color:#f0c36b}\n"
    "#kiln-pick:empty{display:none}\n#kiln-readout{position:absolute;left:8px;bottom:8px;background:rgba(0,0,0,.55);padding:4px 8px}\n"
    "#kiln-pick{position:absolute;left:8px;top:8px;background:rgba(0,0,0,.55);padding:4px 8px}\n"
    "button{background:#3a4049;color:#d7dae0;border:1px solid #555;padding:2px 8px}\n"
    "</style>\n</head>\n<body>\n<canvas id=\"kiln-canvas\"></canvas>\n"
    "<div id=\"kiln-pick\"></div>\n<div id=\"kiln-readout\"></div>\n<div id=\"kiln-panel\"></div>\n"
    "<script type=\"application/json\" id=\"kiln-data\">";

static const char kiln__view_mid[] = "</script>\n<script>\n";
static const char kiln__view_tail[] = "\n</script>\n</body>\n</html>\n";

int kiln__view_write_page(void *view, FILE *out)
{
    fputs(kiln__view_head, out);
    if (!kiln__view_write_data(view, out)) {
        ((kiln__view *)view)->data_failed = 1;
        errno = EINVAL;
        return 0;
    }
    fputs(kiln__view_mid, out);
    fputs(kiln__view_js, out);
    fputs(kiln__view_tail, out);
    return !ferror(out);
}
