// artic replay page: draws window.ARTIC_DATA (written by artic/viewer/replay.py) with the inlined three.js.
// World is z-up (as artic); poses are (px, py, pz, qx, qy, qz, qw); shapes' capsule/cylinder axis is local x.
(function () {
  "use strict";
  const T = window.THREE;
  const D = window.ARTIC_DATA;

  function bytes(b64) {
    const s = atob(b64);
    const u = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
    return u.buffer;
  }
  const f32 = (b64) => new Float32Array(bytes(b64));
  const u32 = (b64) => new Uint32Array(bytes(b64));
  function setPose(obj, pose) {
    obj.position.set(pose.p[0], pose.p[1], pose.p[2]);
    obj.quaternion.set(pose.q[0], pose.q[1], pose.q[2], pose.q[3]);
  }

  T.Object3D.DEFAULT_UP.set(0, 0, 1);
  const host = document.getElementById("artic-view");
  const renderer = new T.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.shadowMap.enabled = true;
  host.appendChild(renderer.domElement);
  const scene = new T.Scene();
  scene.background = new T.Color(0x20242b);

  const poses = f32(D.poses);
  const B = D.bodies.length;
  const F = D.frame_count;

  // the size of what moves sets the camera, the floor, the frame axes and the arrows
  const lo = new T.Vector3(Infinity, Infinity, Infinity), hi = new T.Vector3(-Infinity, -Infinity, -Infinity);
  for (let k = 0; k < F * B; k++) {
    const v = new T.Vector3(poses[7 * k], poses[7 * k + 1], poses[7 * k + 2]);
    lo.min(v); hi.max(v);
  }
  const first = new T.Box3();
  for (let b = 0; b < B; b++) first.expandByPoint(new T.Vector3(poses[7 * b], poses[7 * b + 1], poses[7 * b + 2]));
  const size = Math.max(hi.distanceTo(lo), first.getSize(new T.Vector3()).length(), 0.2);
  const axisLength = 0.12 * Math.max(first.getSize(new T.Vector3()).length(), 0.2);

  function geometry(s) {
    let g;
    if (s.type === "box") {
      g = new T.BoxGeometry(2 * s.half_extents[0], 2 * s.half_extents[1], 2 * s.half_extents[2]);
    } else if (s.type === "sphere") {
      g = new T.SphereGeometry(s.radius, 32, 16);
    } else if (s.type === "capsule" || s.type === "cylinder") {
      g = s.type === "capsule" ? new T.CapsuleGeometry(s.radius, 2 * s.half_height, 8, 24)
        : new T.CylinderGeometry(s.radius, s.radius, 2 * s.half_height, 24);
      g.rotateZ(-Math.PI / 2); // three's axis is y, artic's is x
    } else if (s.type === "mesh") {
      g = new T.BufferGeometry();
      g.setAttribute("position", new T.BufferAttribute(f32(s.vertices), 3));
      g.setIndex(new T.BufferAttribute(u32(s.triangles), 1));
      g.computeVertexNormals();
    }
    return g;
  }

  function planeObject(color) {
    // PhysX's plane is x <= 0 of its frame: draw a large sheet facing +x, and a grid on it for scale
    const extent = Math.max(20 * size, 10);
    const group = new T.Group();
    const sheet = new T.Mesh(new T.PlaneGeometry(extent, extent),
      new T.MeshStandardMaterial({ color: color, roughness: 0.95, side: T.DoubleSide }));
    sheet.geometry.rotateY(Math.PI / 2);
    sheet.receiveShadow = true;
    // grid lines 1, 10 or 100... m apart, about a body's size, over a few body sizes only (far lines alias)
    const step = Math.pow(10, Math.round(Math.log10(size / 2)));
    const gridExtent = step * Math.ceil(6 * size / step);
    const grid = new T.GridHelper(gridExtent, Math.round(gridExtent / step) * 4, 0x4b515c, 0x7c8490);
    grid.rotateZ(-Math.PI / 2);
    grid.position.x = 1e-3 * size;
    group.add(sheet, grid);
    return group;
  }

  function addShapes(group, shapes, color) {
    for (const s of shapes) {
      let obj;
      if (s.type === "plane") {
        obj = planeObject(color);
      } else {
        obj = new T.Mesh(geometry(s), new T.MeshStandardMaterial({
          color: color, roughness: 0.55, metalness: 0.05, flatShading: !!s.flat }));
        obj.castShadow = true;
        obj.receiveShadow = true;
      }
      setPose(obj, s.pose);
      group.add(obj);
    }
  }

  const bodies = [];
  for (const b of D.bodies) {
    const group = new T.Group();
    group.name = b.name;
    addShapes(group, b.shapes, b.color);
    scene.add(group);
    bodies.push(group);
  }
  const statics = D.statics.map((s) => {
    const group = new T.Group();
    group.name = s.name;
    setPose(group, s.pose);
    addShapes(group, s.shapes, s.color);
    scene.add(group);
    return group;
  });

  // joint frames, ArtiSynth style: D (on the parent link or body B) with thick shafts, C (on the child link or
  // body A) thin and longer; a body joint's frame may hang on a static actor or the world
  function axes(length, radius) {
    const group = new T.Group();
    const colors = [0xe53935, 0x43a047, 0x1e88e5];
    for (let a = 0; a < 3; a++) {
      const shaft = new T.Mesh(new T.CylinderGeometry(radius, radius, length, 8),
        new T.MeshBasicMaterial({ color: colors[a], depthTest: false }));
      shaft.renderOrder = 2;
      shaft.position.setComponent(a, length / 2);
      if (a === 0) shaft.rotation.z = -Math.PI / 2;
      if (a === 2) shaft.rotation.x = Math.PI / 2;
      group.add(shaft);
    }
    return group;
  }
  const jointFrames = [];
  for (const f of D.frames) {
    const obj = f.kind === "D" ? axes(axisLength, axisLength / 14) : axes(1.4 * axisLength, axisLength / 40);
    obj.name = f.joint + ":" + f.kind;
    setPose(obj, f.pose);
    obj.visible = false;
    (f.body !== undefined ? bodies[f.body] : f.static !== undefined ? statics[f.static] : scene).add(obj);
    jointFrames.push(obj);
  }
  const linkFrames = bodies.map((g) => {
    const a = new T.AxesHelper(0.8 * axisLength);
    a.visible = false;
    a.material.depthTest = false;
    a.renderOrder = 2;
    g.add(a);
    return a;
  });

  // per-frame arrays of points (and normals, forces): start offsets from the counts
  function perFrame(E) {
    const start = new Int32Array(F + 1);
    let most = 0;
    for (let k = 0; k < F; k++) {
      start[k + 1] = start[k] + E.counts[k];
      most = Math.max(most, E.counts[k]);
    }
    return { start: start, most: most };
  }

  // force arrows: instanced shafts and heads, a typical (not the largest, often an impact's) force 0.3 sizes long
  const up = new T.Vector3(0, 1, 0), tmpQ = new T.Quaternion(), tmpM = new T.Matrix4();
  const tmpP = new T.Vector3(), tmpS = new T.Vector3(), tmpD = new T.Vector3();
  function arrowSet(n, color, typical, radius) {
    const shaft = new T.CylinderGeometry(1, 1, 1, 8); shaft.translate(0, 0.5, 0);
    const head = new T.ConeGeometry(1, 1, 12); head.translate(0, -0.5, 0);
    const mat = new T.MeshBasicMaterial({ color: color, depthTest: false });
    const set = { shaft: new T.InstancedMesh(shaft, mat, n), head: new T.InstancedMesh(head, mat, n) };
    const scale = typical > 0 ? 0.3 * size / typical : 0;
    for (const m of [set.shaft, set.head]) { m.count = 0; m.frustumCulled = false; m.renderOrder = 3; scene.add(m); }
    set.show = (point, force, s0, count) => {
      let drawn = 0;
      for (let i = 0; i < count; i++) {
        const j = 3 * (s0 + i);
        tmpP.set(point[j], point[j + 1], point[j + 2]);
        tmpD.set(force[j], force[j + 1], force[j + 2]);
        const len = tmpD.length() * scale;
        if (len < 1e-6 * size) continue;
        tmpQ.setFromUnitVectors(up, tmpD.normalize());
        const headLen = Math.min(0.3 * len, 0.6 * axisLength);
        set.shaft.setMatrixAt(drawn, tmpM.compose(tmpP, tmpQ, tmpS.set(radius, len - headLen, radius)));
        tmpP.addScaledVector(tmpD, len);
        set.head.setMatrixAt(drawn, tmpM.compose(tmpP, tmpQ, tmpS.set(3 * radius, headLen, 3 * radius)));
        drawn++;
      }
      set.shaft.count = set.head.count = drawn;
      set.shaft.instanceMatrix.needsUpdate = set.head.instanceMatrix.needsUpdate = true;
    };
    return set;
  }

  // contacts: instanced spheres at the points, line segments for normals, arrows for the forces on the links
  const C = D.contacts;
  let cFrames = null, cPoint = null, cNormal = null, cForce = null, pointMesh = null, normalLines = null;
  let contactArrows = null;
  if (C) {
    cFrames = perFrame(C);
    cPoint = f32(C.point); cNormal = f32(C.normal); cForce = f32(C.force);
    const n = Math.max(cFrames.most, 1);
    pointMesh = new T.InstancedMesh(new T.SphereGeometry(0.15 * axisLength, 12, 8),
      new T.MeshBasicMaterial({ color: 0xffeb3b, depthTest: false }), n);
    pointMesh.count = 0;
    pointMesh.frustumCulled = false;
    const ng = new T.BufferGeometry();
    ng.setAttribute("position", new T.BufferAttribute(new Float32Array(6 * n), 3));
    normalLines = new T.LineSegments(ng, new T.LineBasicMaterial({ color: 0x00e5ff, depthTest: false }));
    normalLines.frustumCulled = false;
    for (const m of [pointMesh, normalLines]) { m.renderOrder = 3; scene.add(m); }
    contactArrows = arrowSet(n, 0xff7043, C.typical_force, 0.03 * axisLength);
  }
  // body joints' forces on their body A, at frame C
  const J = D.joint_forces;
  let jFrames = null, jPoint = null, jForce = null, jointArrows = null;
  if (J) {
    jFrames = perFrame(J);
    jPoint = f32(J.point); jForce = f32(J.force);
    jointArrows = arrowSet(Math.max(jFrames.most, 1), 0xe040fb, J.typical_force, 0.04 * axisLength);
  }

  function showContacts(k) {
    if (J) jointArrows.show(jPoint, jForce, jFrames.start[k], J.counts[k]);
    if (!C) return;
    const s0 = cFrames.start[k], n = C.counts[k];
    const pos = normalLines.geometry.attributes.position;
    for (let i = 0; i < n; i++) {
      const j = 3 * (s0 + i);
      pointMesh.setMatrixAt(i, tmpM.makeTranslation(cPoint[j], cPoint[j + 1], cPoint[j + 2]));
      pos.setXYZ(2 * i, cPoint[j], cPoint[j + 1], cPoint[j + 2]);
      pos.setXYZ(2 * i + 1, cPoint[j] + axisLength * cNormal[j], cPoint[j + 1] + axisLength * cNormal[j + 1],
        cPoint[j + 2] + axisLength * cNormal[j + 2]);
    }
    pointMesh.count = n;
    pointMesh.instanceMatrix.needsUpdate = true;
    normalLines.geometry.setDrawRange(0, 2 * n);
    pos.needsUpdate = true;
    contactArrows.show(cPoint, cForce, s0, n);
  }

  // lights and camera
  scene.add(new T.HemisphereLight(0xffffff, 0x404550, 1.4));
  const sun = new T.DirectionalLight(0xffffff, 2.2);
  const center = first.getCenter(new T.Vector3());
  sun.position.copy(center).add(new T.Vector3(0.6 * size, -0.4 * size, 1.5 * size + 1));
  sun.target.position.copy(center);
  sun.castShadow = true;
  sun.shadow.mapSize.set(2048, 2048);
  const sc = sun.shadow.camera;
  sc.left = sc.bottom = -1.5 * size; sc.right = sc.top = 1.5 * size; sc.near = 0.01; sc.far = 6 * size + 4;
  scene.add(sun, sun.target);
  const camera = new T.PerspectiveCamera(45, 1, 0.01 * size, 200 * size);
  camera.position.copy(center).add(new T.Vector3(1.9 * size, -2.4 * size, 1.3 * size));
  const controls = new T.OrbitControls(camera, renderer.domElement);
  controls.target.copy(center);
  controls.update();

  // playback
  const slider = document.getElementById("artic-slider");
  const playBtn = document.getElementById("artic-play");
  const speedSel = document.getElementById("artic-speed");
  const timeLabel = document.getElementById("artic-time");
  slider.max = String(F - 1);
  let frame = 0, playing = false, playTime = 0, last = null;

  function setFrame(k) {
    frame = Math.max(0, Math.min(F - 1, Math.round(k)));
    for (let b = 0; b < B; b++) {
      const o = 7 * (frame * B + b);
      bodies[b].position.set(poses[o], poses[o + 1], poses[o + 2]);
      bodies[b].quaternion.set(poses[o + 3], poses[o + 4], poses[o + 5], poses[o + 6]);
    }
    showContacts(frame);
    slider.value = String(frame);
    timeLabel.textContent = (frame * D.dt).toFixed(3) + " s";
  }
  function setPlaying(on) {
    playing = on;
    playBtn.textContent = on ? "Pause" : "Play";
    if (on && frame >= F - 1) setFrame(0);
    playTime = frame * D.dt;
    last = null;
  }
  slider.addEventListener("input", () => { setPlaying(false); setFrame(Number(slider.value)); });
  playBtn.addEventListener("click", () => setPlaying(!playing));
  window.addEventListener("keydown", (e) => {
    if (e.code === "Space") { e.preventDefault(); setPlaying(!playing); }
  });
  function toggle(id, objs) {
    const box = document.getElementById(id);
    const apply = () => { for (const o of objs) if (o) o.visible = box.checked; };
    box.addEventListener("change", apply);
    apply();
  }
  toggle("artic-joint-frames", jointFrames);
  toggle("artic-link-frames", linkFrames);
  toggle("artic-contacts", [pointMesh]);
  toggle("artic-normals", [normalLines]);
  toggle("artic-forces", contactArrows ? [contactArrows.shaft, contactArrows.head] : []);
  toggle("artic-joint-forces", jointArrows ? [jointArrows.shaft, jointArrows.head] : []);
  // toggles for what the replay does not hold are hidden, not shown dead
  const hide = (id) => { document.getElementById(id).parentElement.style.display = "none"; };
  if (!C) ["artic-contacts", "artic-normals", "artic-forces"].forEach(hide);
  if (!J) hide("artic-joint-forces");
  if (!jointFrames.length) hide("artic-joint-frames");

  function resize() {
    const w = host.clientWidth || window.innerWidth, h = host.clientHeight || window.innerHeight;
    renderer.setSize(w, h);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
  }
  window.addEventListener("resize", resize);
  resize();

  function render() { renderer.render(scene, camera); }
  function tick(now) {
    if (playing) {
      if (last !== null) playTime += (now - last) / 1000 * Number(speedSel.value);
      last = now;
      const k = Math.floor(playTime / D.dt);
      if (k >= F - 1) { setFrame(F - 1); setPlaying(false); } else if (k !== frame) setFrame(k);
    }
    render();
    requestAnimationFrame(tick);
  }
  setFrame(0);
  render();
  requestAnimationFrame(tick);

  // for scripts and tests: what the page holds, and a way to move without the mouse
  window.articReplay = {
    bodyCount: B, staticCount: D.statics.length, frameCount: F, jointFrameCount: jointFrames.length,
    maxContacts: C ? cFrames.most : 0, maxJointForces: J ? jFrames.most : 0, get frame() { return frame; },
    setFrame: (k) => { setPlaying(false); setFrame(k); render(); },
    play: () => setPlaying(true), pause: () => setPlaying(false),
    ready: true,
  };
})();
