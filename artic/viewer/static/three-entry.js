// Entry for the bundle that artic's replay pages inline: three.js core plus OrbitControls, as one global.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
globalThis.THREE = Object.assign({}, THREE, { OrbitControls });
