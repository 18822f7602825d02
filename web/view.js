// The renderer of `kiln view` pages: WebGL2, no library. It draws what the tool embedded in
// the #kiln-data element and computes nothing the runtime computes: bone matrices, blend shape
// weights and skinned vertices arrive per frame. What it does compute is only for drawing: the
// camera, the bones' line segments from their matrices, instance boxes, the pick ray.
// docs/view.md describes the page and the data document.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('kiln-data').textContent);
  var canvas = document.getElementById('kiln-canvas');
  var panel = document.getElementById('kiln-panel');
  var readout = document.getElementById('kiln-readout');
  var pickOut = document.getElementById('kiln-pick');

  function bytes(b64) {
    var s = atob(b64), out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out.buffer;
  }
  function f32(b64) { return new Float32Array(bytes(b64 || '')); }
  function u32(b64) { return new Uint32Array(bytes(b64 || '')); }

  // ---- matrices (column-major, as the runtime writes them) ----
  function mul(a, b) {
    var o = new Float32Array(16);
    for (var c = 0; c < 4; c++)
      for (var r = 0; r < 4; r++) {
        var s = 0;
        for (var k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
        o[c * 4 + r] = s;
      }
    return o;
  }
  function perspective(fovy, aspect, near, far) {
    var f = 1 / Math.tan(fovy / 2), o = new Float32Array(16);
    o[0] = f / aspect; o[5] = f; o[10] = (far + near) / (near - far); o[11] = -1;
    o[14] = 2 * far * near / (near - far);
    return o;
  }
  function lookAt(eye, at, up) {
    var z = norm(sub(eye, at)), x = norm(cross(up, z)), y = cross(z, x), o = new Float32Array(16);
    o[0] = x[0]; o[4] = x[1]; o[8] = x[2]; o[12] = -dot(x, eye);
    o[1] = y[0]; o[5] = y[1]; o[9] = y[2]; o[13] = -dot(y, eye);
    o[2] = z[0]; o[6] = z[1]; o[10] = z[2]; o[14] = -dot(z, eye);
    o[15] = 1;
    return o;
  }
  function invert(m) {
    var inv = new Float32Array(16), i;
    inv[0] = m[5]*m[10]*m[15]-m[5]*m[11]*m[14]-m[9]*m[6]*m[15]+m[9]*m[7]*m[14]+m[13]*m[6]*m[11]-m[13]*m[7]*m[10];
    inv[4] = -m[4]*m[10]*m[15]+m[4]*m[11]*m[14]+m[8]*m[6]*m[15]-m[8]*m[7]*m[14]-m[12]*m[6]*m[11]+m[12]*m[7]*m[10];
    inv[8] = m[4]*m[9]*m[15]-m[4]*m[11]*m[13]-m[8]*m[5]*m[15]+m[8]*m[7]*m[13]+m[12]*m[5]*m[11]-m[12]*m[7]*m[9];
    inv[12] = -m[4]*m[9]*m[14]+m[4]*m[10]*m[13]+m[8]*m[5]*m[14]-m[8]*m[6]*m[13]-m[12]*m[5]*m[10]+m[12]*m[6]*m[9];
    inv[1] = -m[1]*m[10]*m[15]+m[1]*m[11]*m[14]+m[9]*m[2]*m[15]-m[9]*m[3]*m[14]-m[13]*m[2]*m[11]+m[13]*m[3]*m[10];
    inv[5] = m[0]*m[10]*m[15]-m[0]*m[11]*m[14]-m[8]*m[2]*m[15]+m[8]*m[3]*m[14]+m[12]*m[2]*m[11]-m[12]*m[3]*m[10];
    inv[9] = -m[0]*m[9]*m[15]+m[0]*m[11]*m[13]+m[8]*m[1]*m[15]-m[8]*m[3]*m[13]-m[12]*m[1]*m[11]+m[12]*m[3]*m[9];
    inv[13] = m[0]*m[9]*m[14]-m[0]*m[10]*m[13]-m[8]*m[1]*m[14]+m[8]*m[2]*m[13]+m[12]*m[1]*m[10]-m[12]*m[2]*m[9];
    inv[2] = m[1]*m[6]*m[15]-m[1]*m[7]*m[14]-m[5]*m[2]*m[15]+m[5]*m[3]*m[14]+m[13]*m[2]*m[7]-m[13]*m[3]*m[6];
    inv[6] = -m[0]*m[6]*m[15]+m[0]*m[7]*m[14]+m[4]*m[2]*m[15]-m[4]*m[3]*m[14]-m[12]*m[2]*m[7]+m[12]*m[3]*m[6];
    inv[10] = m[0]*m[5]*m[15]-m[0]*m[7]*m[13]-m[4]*m[1]*m[15]+m[4]*m[3]*m[13]+m[12]*m[1]*m[7]-m[12]*m[3]*m[5];
    inv[14] = -m[0]*m[5]*m[14]+m[0]*m[6]*m[13]+m[4]*m[1]*m[14]-m[4]*m[2]*m[13]-m[12]*m[1]*m[6]+m[12]*m[2]*m[5];
    inv[3] = -m[1]*m[6]*m[11]+m[1]*m[7]*m[10]+m[5]*m[2]*m[11]-m[5]*m[3]*m[10]-m[9]*m[2]*m[7]+m[9]*m[3]*m[6];
    inv[7] = m[0]*m[6]*m[11]-m[0]*m[7]*m[10]-m[4]*m[2]*m[11]+m[4]*m[3]*m[10]+m[8]*m[2]*m[7]-m[8]*m[3]*m[6];
    inv[11] = -m[0]*m[5]*m[11]+m[0]*m[7]*m[9]+m[4]*m[1]*m[11]-m[4]*m[3]*m[9]-m[8]*m[1]*m[7]+m[8]*m[3]*m[5];
    inv[15] = m[0]*m[5]*m[10]-m[0]*m[6]*m[9]-m[4]*m[1]*m[10]+m[4]*m[2]*m[9]+m[8]*m[1]*m[6]-m[8]*m[2]*m[5];
    var det = m[0] * inv[0] + m[1] * inv[4] + m[2] * inv[8] + m[3] * inv[12];
    if (!det) return null;
    for (i = 0; i < 16; i++) inv[i] /= det;
    return inv;
  }
  function sub(a, b) { return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]; }
  function dot(a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
  function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]; }
  function norm(a) { var l = Math.sqrt(dot(a, a)) || 1; return [a[0] / l, a[1] / l, a[2] / l]; }
  function xform(m, p, w) {
    return [m[0] * p[0] + m[4] * p[1] + m[8] * p[2] + m[12] * w, m[1] * p[0] + m[5] * p[1] + m[9] * p[2] + m[13] * w,
            m[2] * p[0] + m[6] * p[1] + m[10] * p[2] + m[14] * w];
  }
  var IDENTITY = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);

  // ---- GL ----
  var gl = canvas.getContext('webgl2', {antialias: true});
  if (!gl) {
    readout.textContent = 'WebGL2 is not available in this browser.';
    throw new Error('kiln view: WebGL2 is not available');
  }
  function program(vs, fs) {
    function shader(type, src) {
      var s = gl.createShader(type);
      gl.shaderSource(s, '#version 300 es\nprecision highp float;\n' + src);
      gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
      return s;
    }
    var p = gl.createProgram();
    gl.attachShader(p, shader(gl.VERTEX_SHADER, vs));
    gl.attachShader(p, shader(gl.FRAGMENT_SHADER, fs));
    gl.bindAttribLocation(p, 0, 'a_pos');
    gl.bindAttribLocation(p, 1, 'a_nrm');
    gl.bindAttribLocation(p, 2, 'a_inst');
    gl.linkProgram(p);
    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(p));
    return p;
  }
  // Meshes: Lambert plus ambient on the (skinned) normals; instances through a per-instance matrix.
  var meshProg = program(
    'layout(location=0) in vec3 a_pos; layout(location=1) in vec3 a_nrm; layout(location=2) in mat4 a_inst;\n' +
    'uniform mat4 u_vp; uniform int u_flat; out vec3 v_n; out vec3 v_w;\n' +
    'void main(){ vec4 w = a_inst * vec4(a_pos,1.0); v_w = w.xyz; v_n = mat3(a_inst) * a_nrm;\n' +
    '  gl_Position = u_vp * w; }',
    'in vec3 v_n; in vec3 v_w; uniform vec3 u_color; uniform int u_flat; out vec4 o;\n' +
    'void main(){ vec3 n = u_flat == 1 ? cross(dFdx(v_w), dFdy(v_w)) : v_n;\n' +
    '  n = normalize(n); if (!gl_FrontFacing && u_flat == 0) n = -n;\n' +
    '  float l = 0.25 + 0.75 * abs(dot(n, normalize(vec3(0.4, 0.8, 0.45))));\n' +
    '  o = vec4(u_color * l, 1.0); }');
  var lineProg = program(
    'layout(location=0) in vec3 a_pos; uniform mat4 u_vp; void main(){ gl_Position = u_vp * vec4(a_pos,1.0); gl_PointSize = 5.0; }',
    'uniform vec3 u_color; out vec4 o; void main(){ o = vec4(u_color, 1.0); }');

  function buffer(target, arr, usage) {
    var b = gl.createBuffer();
    gl.bindBuffer(target, b);
    gl.bufferData(target, arr, usage || gl.STATIC_DRAW);
    return b;
  }
  // A drawable: positions (+normals) with indices and an instance matrix buffer.
  function drawable(pos, nrm, idx, instances) {
    var d = {vao: gl.createVertexArray(), count: idx.length, flat: !nrm, instances: instances.length / 16};
    gl.bindVertexArray(d.vao);
    d.pbuf = buffer(gl.ARRAY_BUFFER, pos, gl.DYNAMIC_DRAW);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
    if (nrm) {
      d.nbuf = buffer(gl.ARRAY_BUFFER, nrm, gl.DYNAMIC_DRAW);
      gl.enableVertexAttribArray(1);
      gl.vertexAttribPointer(1, 3, gl.FLOAT, false, 0, 0);
    } else {
      gl.vertexAttrib3f(1, 0, 1, 0);
    }
    d.ibuf = buffer(gl.ARRAY_BUFFER, instances);
    for (var c = 0; c < 4; c++) {
      gl.enableVertexAttribArray(2 + c);
      gl.vertexAttribPointer(2 + c, 4, gl.FLOAT, false, 64, c * 16);
      gl.vertexAttribDivisor(2 + c, 1);
    }
    buffer(gl.ELEMENT_ARRAY_BUFFER, idx);
    gl.bindVertexArray(null);
    return d;
  }

  // ---- the scene ----
  var models = data.models || [], clips = data.clips || [], inst = data.instances || {count: 0, shown: 0, refs: [], names: []};
  var instMats = f32(inst.matrices), instRef = u32(inst.ref);
  var refs = inst.refs || [];
  var placedBy = {};   // model index -> instance matrices (Float32Array)
  var boxes = [];      // {ref, matrices}
  refs.forEach(function (r, ri) {
    var list = [];
    for (var i = 0; i < inst.shown; i++) if (instRef[i] === ri) list.push(instMats.subarray(i * 16, i * 16 + 16));
    var arr = new Float32Array(list.length * 16);
    list.forEach(function (m, k) { arr.set(m, k * 16); });
    if (r.model >= 0) {
      var prev = placedBy[r.model];
      if (prev) { var both = new Float32Array(prev.length + arr.length); both.set(prev); both.set(arr, prev.length); arr = both; }
      placedBy[r.model] = arr;
    } else if (list.length) boxes.push({ref: r, matrices: arr});
  });
  var palette = [[0.80, 0.62, 0.45], [0.55, 0.72, 0.85], [0.62, 0.80, 0.55], [0.85, 0.55, 0.62], [0.75, 0.70, 0.50]];
  var lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  function grow(p) { for (var c = 0; c < 3; c++) { lo[c] = Math.min(lo[c], p[c]); hi[c] = Math.max(hi[c], p[c]); } }
  function growBox(b, m) {
    for (var k = 0; k < 8; k++) grow(xform(m, [k & 1 ? b[3] : b[0], k & 2 ? b[4] : b[1], k & 4 ? b[5] : b[2]], 1));
  }
  models.forEach(function (m, mi) {
    var placements = placedBy[mi] || IDENTITY;
    m.rest = f32(m.rest);
    m.draw = m.meshes.map(function (mesh, k) {
      var pos = f32(mesh.positions), nrm = mesh.normals ? f32(mesh.normals) : null;
      for (var i = 0; i < placements.length; i += 16) growBox(mesh.bounds, placements.subarray(i, i + 16));
      var d = drawable(pos, nrm, u32(mesh.indices), placements);
      d.restPos = pos; d.restNrm = nrm; d.color = palette[(mi + k) % palette.length];
      return d;
    });
    m.placements = placements;
  });
  var cube = {pos: new Float32Array(24 * 3), nrm: new Float32Array(24 * 3), idx: new Uint32Array(36)};
  (function () { // 6 faces of the unit cube [-0.5, 0.5]^3, 4 vertices each
    var f = 0;
    for (var axis = 0; axis < 3; axis++)
      for (var side = -1; side <= 1; side += 2, f++) {
        for (var v = 0; v < 4; v++) {
          var p = [0, 0, 0], n = [0, 0, 0];
          p[axis] = 0.5 * side; n[axis] = side;
          p[(axis + 1) % 3] = (v & 1) ? 0.5 : -0.5; p[(axis + 2) % 3] = (v & 2) ? 0.5 : -0.5;
          cube.pos.set(p, (f * 4 + v) * 3); cube.nrm.set(n, (f * 4 + v) * 3);
        }
        cube.idx.set([f * 4, f * 4 + 1, f * 4 + 3, f * 4, f * 4 + 3, f * 4 + 2], f * 6);
      }
  })();
  boxes.forEach(function (b) {
    var bb = b.ref.bounds, s = [bb[3] - bb[0], bb[4] - bb[1], bb[5] - bb[2]], c = [(bb[0] + bb[3]) / 2, (bb[1] + bb[4]) / 2, (bb[2] + bb[5]) / 2];
    var big = Math.max(s[0], s[1], s[2], 1e-3);
    for (var k = 0; k < 3; k++) s[k] = Math.max(s[k], 0.02 * big); // a flat asset still gets a drawable box
    var local = new Float32Array([s[0], 0, 0, 0, 0, s[1], 0, 0, 0, 0, s[2], 0, c[0], c[1], c[2], 1]);
    var mats = new Float32Array(b.matrices.length);
    for (var i = 0; i < b.matrices.length; i += 16) {
      mats.set(mul(b.matrices.subarray(i, i + 16), local), i);
      growBox(bb, b.matrices.subarray(i, i + 16));
    }
    b.draw = drawable(cube.pos, cube.nrm, cube.idx, mats);
  });
  if (!isFinite(lo[0])) { lo = [-1, -1, -1]; hi = [1, 1, 1]; }
  var lineBuf = gl.createBuffer(), lineVao = gl.createVertexArray();
  gl.bindVertexArray(lineVao);
  gl.bindBuffer(gl.ARRAY_BUFFER, lineBuf);
  gl.enableVertexAttribArray(0);
  gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
  gl.bindVertexArray(null);

  clips.forEach(function (c) {
    c.boneMats = f32(c.bones);
    c.vals = f32(c.values);
    c.skin = {};
    c.skinned.forEach(function (s) { c.skin[s.mesh] = {pos: f32(s.positions), nrm: s.normals ? f32(s.normals) : null}; });
  });

  // ---- state: camera, clip, frame ----
  var center = [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2];
  var radius = Math.max(1e-3, 0.5 * Math.sqrt(dot(sub(hi, lo), sub(hi, lo))));
  var cam = {yaw: 0.6, pitch: 0.25, dist: radius * 2.6, target: center.slice()};
  var state = {clip: clips.length ? 0 : -1, frame: 0, playing: clips.length > 0, last: 0, acc: 0};
  var hash = {};
  location.hash.replace(/^#/, '').split('&').forEach(function (kv) { var p = kv.split('='); if (p[0]) hash[p[0]] = p[1] === undefined ? '1' : p[1]; });
  if (hash.clip !== undefined && clips[+hash.clip]) state.clip = +hash.clip;
  if (hash.frame !== undefined) { state.frame = Math.max(0, +hash.frame | 0); state.playing = false; }
  if (hash.yaw !== undefined) cam.yaw = +hash.yaw;
  var showBones = hash.bones !== '0'; // #bones=0: meshes only (the browser test looks at them alone)

  function eye() {
    var cp = Math.cos(cam.pitch);
    return [cam.target[0] + cam.dist * cp * Math.sin(cam.yaw), cam.target[1] + cam.dist * Math.sin(cam.pitch),
            cam.target[2] + cam.dist * cp * Math.cos(cam.yaw)];
  }
  function viewProj() {
    var w = canvas.clientWidth || 1, h = canvas.clientHeight || 1;
    return mul(perspective(0.8, w / h, cam.dist * 0.01, cam.dist * 10 + radius * 4), lookAt(eye(), cam.target, [0, 1, 0]));
  }

  // ---- the panel ----
  function el(tag, text, parent) { var e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (parent) parent.appendChild(e); return e; }
  el('h2', data.title || (data.inputs || []).join(', '), panel);
  var capped = el('div', '', panel);
  capped.id = 'kiln-capped';
  if ((data.capped || []).length) {
    el('div', 'Capped:', capped);
    data.capped.forEach(function (t) { el('div', '- ' + t, capped); });
  } else el('div', 'Nothing capped (caps: ' + data.caps.vertices + ' vertices, ' + data.caps.frames + ' frames per clip, ' + data.caps.instances + ' instances).', capped);
  var controls = el('div', '', panel);
  var bPrev = el('button', '<', controls), bPlay = el('button', 'pause', controls), bNext = el('button', '>', controls);
  var slider = el('input', undefined, controls);
  slider.type = 'range'; slider.min = 0; slider.style.width = '100%';
  if (!clips.length) controls.style.display = 'none';
  el('h2', 'Models', panel);
  var ulModels = el('ul', undefined, panel);
  models.forEach(function (m) {
    var li = el('li', m.name + ' (' + m.bones.length + ' bones)', ulModels);
    m.meshes.forEach(function (mesh) {
      el('div', '\u00a0\u00a0mesh ' + mesh.name + ': ' + mesh.shown + '/' + mesh.vertices + ' vertices, ' + mesh.trianglesShown + '/' +
         mesh.triangles + ' triangles' + (mesh.material ? ', material ' + mesh.material : ''), li);
    });
    m.materials.forEach(function (mt) {
      el('div', '\u00a0\u00a0material ' + mt.name + ' (' + mt.type + '): ' + mt.slots.map(function (s) {
        return s.name + '=' + (s.file !== undefined ? s.file : s.rgba.map(function (x) { return x.toFixed(2); }).join(' '));
      }).join(', '), li);
    });
  });
  el('h2', 'Clips', panel);
  var ulClips = el('ul', undefined, panel);
  var clipItems = clips.map(function (c, ci) {
    var li = el('li', c.name + ' (' + c.frames + ' frames @ ' + c.framerate + ' fps' + (c.lossy ? ', lossy' : '') + ')', ulClips);
    li.onclick = function () { state.clip = ci; state.frame = 0; sync(); };
    return li;
  });
  var weightsDiv = el('div', '', panel);
  el('h2', 'Instances (' + inst.count + (inst.shown < inst.count ? ', ' + inst.shown + ' placed' : '') + ')', panel);
  var ulInst = el('ul', undefined, panel);
  function refText(r) {
    return r.path + (r.model >= 0 ? '' : r.from === 'file' ? ' (box: the file\u2019s bounds)' : ' (unit box: not found)');
  }
  for (var i = 0; i < Math.min(inst.shown, 200); i++) el('li', inst.names[i] + ' \u2192 ' + refText(refs[instRef[i]]), ulInst);
  if (inst.shown > 200) el('li', '... ' + (inst.shown - 200) + ' more (click one in the view)', ulInst);

  function sync() {
    var c = clips[state.clip];
    clipItems.forEach(function (li, k) { li.className = k === state.clip ? 'on' : ''; });
    bPlay.textContent = state.playing ? 'pause' : 'play';
    if (!c) { readout.textContent = 'no clip'; return; }
    state.frame = Math.min(state.frame, c.shown - 1);
    slider.max = c.shown - 1; slider.value = state.frame;
    var src = c.first + state.frame * c.step;
    readout.textContent = 'clip ' + c.name + '  frame ' + src + ' (' + (state.frame + 1) + '/' + c.shown + ' embedded' +
      (c.step > 1 ? ', one in ' + c.step : '') + ')  t=' + (src / c.framerate).toFixed(3) + ' s';
    weightsDiv.textContent = '';
    c.scalars.forEach(function (s, k) { el('div', s[1] + ' ' + s[0] + ' = ' + c.vals[state.frame * c.scalars.length + k].toFixed(4), weightsDiv); });
  }
  bPlay.onclick = function () { state.playing = !state.playing; sync(); };
  bPrev.onclick = function () { state.playing = false; state.frame = Math.max(0, state.frame - 1); sync(); };
  bNext.onclick = function () { var c = clips[state.clip]; state.playing = false; if (c) state.frame = Math.min(c.shown - 1, state.frame + 1); sync(); };
  slider.oninput = function () { state.playing = false; state.frame = +slider.value; sync(); };

  // ---- drawing ----
  function draw() {
    var w = canvas.clientWidth, h = canvas.clientHeight, dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) { canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr); }
    gl.viewport(0, 0, canvas.width, canvas.height);
    gl.clearColor(0.118, 0.133, 0.153, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    var vp = viewProj(), c = clips[state.clip];
    gl.useProgram(meshProg);
    gl.uniformMatrix4fv(gl.getUniformLocation(meshProg, 'u_vp'), false, vp);
    var uColor = gl.getUniformLocation(meshProg, 'u_color'), uFlat = gl.getUniformLocation(meshProg, 'u_flat');
    models.forEach(function (m, mi) {
      m.draw.forEach(function (d, k) {
        var s = c && c.model === mi ? c.skin[k] : null, n = d.restPos.length;
        gl.bindBuffer(gl.ARRAY_BUFFER, d.pbuf);
        gl.bufferSubData(gl.ARRAY_BUFFER, 0, s ? s.pos.subarray(state.frame * n, state.frame * n + n) : d.restPos);
        if (d.nbuf) {
          gl.bindBuffer(gl.ARRAY_BUFFER, d.nbuf);
          gl.bufferSubData(gl.ARRAY_BUFFER, 0, s && s.nrm ? s.nrm.subarray(state.frame * n, state.frame * n + n) : d.restNrm);
        }
        gl.uniform3fv(uColor, d.color);
        gl.uniform1i(uFlat, d.flat ? 1 : 0);
        gl.bindVertexArray(d.vao);
        gl.drawElementsInstanced(gl.TRIANGLES, d.count, gl.UNSIGNED_INT, 0, d.instances);
      });
    });
    boxes.forEach(function (b) {
      gl.uniform3fv(uColor, [0.5, 0.55, 0.62]);
      gl.uniform1i(uFlat, 0);
      gl.bindVertexArray(b.draw.vao);
      gl.drawElementsInstanced(gl.TRIANGLES, b.draw.count, gl.UNSIGNED_INT, 0, b.draw.instances);
    });
    // skeletons over the meshes: bone to parent, from the embedded model-space matrices
    gl.disable(gl.DEPTH_TEST);
    gl.useProgram(lineProg);
    gl.uniformMatrix4fv(gl.getUniformLocation(lineProg, 'u_vp'), false, vp);
    gl.uniform3fv(gl.getUniformLocation(lineProg, 'u_color'), [1.0, 0.85, 0.2]);
    gl.bindVertexArray(lineVao);
    models.forEach(function (m, mi) {
      if (!m.bones.length || !showBones) return;
      var mats = c && c.model === mi ? c.boneMats.subarray(state.frame * m.bones.length * 16, (state.frame + 1) * m.bones.length * 16) : m.rest;
      var pts = [];
      for (var p = 0; p < m.placements.length; p += 16) {
        var pl = m.placements.subarray(p, p + 16);
        m.bones.forEach(function (b, k) {
          if (b[1] < 0) return;
          var a = xform(pl, [mats[k * 16 + 12], mats[k * 16 + 13], mats[k * 16 + 14]], 1);
          var q = xform(pl, [mats[b[1] * 16 + 12], mats[b[1] * 16 + 13], mats[b[1] * 16 + 14]], 1);
          pts.push(a[0], a[1], a[2], q[0], q[1], q[2]);
        });
      }
      gl.bindBuffer(gl.ARRAY_BUFFER, lineBuf);
      gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(pts), gl.STREAM_DRAW);
      gl.drawArrays(gl.LINES, 0, pts.length / 3);
      gl.drawArrays(gl.POINTS, 0, pts.length / 3);
    });
    gl.bindVertexArray(null);
  }

  function tick(t) {
    var c = clips[state.clip];
    if (state.playing && c) {
      state.acc += Math.min(0.25, (t - (state.last || t)) / 1000);
      var per = c.step / c.framerate;
      while (state.acc >= per) { state.acc -= per; state.frame = (state.frame + 1) % c.shown; sync(); }
    }
    state.last = t;
    draw();
    requestAnimationFrame(tick);
  }

  // ---- camera and picking ----
  var drag = null;
  canvas.addEventListener('contextmenu', function (e) { e.preventDefault(); });
  canvas.addEventListener('mousedown', function (e) { drag = {x: e.clientX, y: e.clientY, pan: e.button !== 0 || e.shiftKey, moved: 0}; });
  window.addEventListener('mouseup', function (e) { if (drag && drag.moved < 4) pick(e); drag = null; });
  window.addEventListener('mousemove', function (e) {
    if (!drag) return;
    var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    drag.x = e.clientX; drag.y = e.clientY; drag.moved += Math.abs(dx) + Math.abs(dy);
    if (drag.pan) {
      var ey = eye(), f = norm(sub(cam.target, ey)), r = norm(cross(f, [0, 1, 0])), u = cross(r, f), s = cam.dist * 0.0015;
      for (var k = 0; k < 3; k++) cam.target[k] += (-dx * r[k] + dy * u[k]) * s;
    } else {
      cam.yaw -= dx * 0.008;
      cam.pitch = Math.max(-1.5, Math.min(1.5, cam.pitch + dy * 0.008));
    }
  });
  canvas.addEventListener('wheel', function (e) { e.preventDefault(); cam.dist *= Math.exp(e.deltaY * 0.001); }, {passive: false});

  // The nearest box (instance or drawn model) the ray through the clicked pixel hits.
  function pick(e) {
    var rect = canvas.getBoundingClientRect(), inv = invert(viewProj());
    if (!inv) return;
    var x = (e.clientX - rect.left) / rect.width * 2 - 1, y = 1 - (e.clientY - rect.top) / rect.height * 2;
    function unproject(z) { var p = [x, y, z], w = inv[3] * x + inv[7] * y + inv[11] * z + inv[15]; var q = xform(inv, p, 1); return [q[0] / w, q[1] / w, q[2] / w]; }
    var o = unproject(-1), dir = sub(unproject(1), o), best = Infinity, name = '';
    function test(m, b, label) {
      var mi = invert(m);
      if (!mi) return;
      var lo3 = xform(mi, o, 1), ld = xform(mi, dir, 0), t0 = 0, t1 = 1;
      for (var k = 0; k < 3; k++) {
        if (Math.abs(ld[k]) < 1e-12) { if (lo3[k] < b[k] || lo3[k] > b[k + 3]) return; continue; }
        var a = (b[k] - lo3[k]) / ld[k], c = (b[k + 3] - lo3[k]) / ld[k];
        t0 = Math.max(t0, Math.min(a, c)); t1 = Math.min(t1, Math.max(a, c));
        if (t0 > t1) return;
      }
      if (t0 < best) { best = t0; name = label; }
    }
    for (var i = 0; i < inst.shown; i++) test(instMats.subarray(i * 16, i * 16 + 16), refs[instRef[i]].bounds, 'instance ' + inst.names[i] + ' \u2192 ' + refText(refs[instRef[i]]));
    models.forEach(function (m) {
      if (m.placements !== IDENTITY) return;
      m.meshes.forEach(function (mesh) { test(IDENTITY, mesh.bounds, 'model ' + m.name + ', mesh ' + mesh.name); });
    });
    pickOut.textContent = name ? 'picked: ' + name : '';
  }
  window.kilnView = {data: data, state: state, draw: draw, sync: sync}; // for tests and the console

  sync();
  draw();
  // #pick=X,Y: a click at canvas pixel (X, Y), for links; #pick=drawn: a click a few pixels
  // inside the first thing drawn (row by row from the top, read back from the canvas), for the
  // browser test, whose window size the page cannot know in advance
  if (hash.pick) {
    var xy = hash.pick.split(','), rc = canvas.getBoundingClientRect();
    if (hash.pick === 'drawn') {
      var cw = canvas.width, ch = canvas.height, px = new Uint8Array(cw * ch * 4), dpr = cw / (rc.width || 1);
      gl.readPixels(0, 0, cw, ch, gl.RGBA, gl.UNSIGNED_BYTE, px);
      xy = null;
      for (var row = ch - 1; row >= 0 && !xy; row--)
        for (var col = 0; col < cw; col++) {
          var at = (row * cw + col) * 4;
          if (Math.abs(px[at] - 30) + Math.abs(px[at + 1] - 34) + Math.abs(px[at + 2] - 39) > 24) {
            xy = [col / dpr + 2, (ch - 1 - row) / dpr + 8];
            break;
          }
        }
    }
    if (xy) pick({clientX: rc.left + +xy[0], clientY: rc.top + +xy[1]});
  }
  requestAnimationFrame(tick);
})();
