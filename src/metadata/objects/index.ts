import type { ObjectDef } from '../types.js';
import { alndomain } from './alndomain.js';
import { apikeytoken } from './apikeytoken.js';
import { asset } from './asset.js';
import { assetmeter } from './assetmeter.js';
import { assetspec } from './assetspec.js';
import { assetstatus } from './assetstatus.js';
import { dmpackage } from './dmpackage.js';
import { easaudit, logintracking } from './easaudit.js';
import { dmpackagedef } from './dmpackagedef.js';
import { dmpkgdefcontent } from './dmpkgdefcontent.js';
import { dmpkgdsttrgt } from './dmpkgdsttrgt.js';
import { groupuser } from './groupuser.js';
import { item } from './item.js';
import { locations } from './locations.js';
import { maxattributecfg } from './maxattributecfg.js';
import { maxdomain } from './maxdomain.js';
import { maxgroup } from './maxgroup.js';
import { maxprop, maxpropvalue } from './maxprop.js';
import { maxuser } from './maxuser.js';
import { numericdomain } from './numericdomain.js';
import { organization } from './organization.js';
import { osauth } from './osauth.js';
import { person } from './person.js';
import { site } from './site.js';
import { sr } from './sr.js';
import { synonymdomain } from './synonymdomain.js';
import { tabledomain } from './tabledomain.js';
import { tkstatus } from './tkstatus.js';
import { workorder } from './workorder.js';
import { worklog } from './worklog.js';
import { wostatus } from './wostatus.js';

/** The business objects of the service, one file each (see ../README.md for how to add one). */
export const baseObjects: readonly ObjectDef[] = [
  organization,
  site,
  person,
  maxuser,
  maxgroup,
  groupuser,
  osauth,
  maxdomain,
  alndomain,
  numericdomain,
  synonymdomain,
  tabledomain,
  locations,
  item,
  asset,
  workorder,
  apikeytoken,
  wostatus,
  assetstatus,
  assetspec,
  assetmeter,
  dmpackagedef,
  dmpkgdefcontent,
  dmpkgdsttrgt,
  dmpackage,
  maxattributecfg,
  maxprop,
  maxpropvalue,
  sr,
  tkstatus,
  worklog,
  easaudit,
  logintracking,
];
